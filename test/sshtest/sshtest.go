// Package sshtest prepares a real sshd for tests that stand in for worker
// pods: a host key, a client identity it accepts, and a configuration that
// needs no PAM and no particular user's home.
package sshtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trainfn/trainfn/test/testtool"
)

// Server is an sshd configuration in a folder of its own.
type Server struct {
	// SSHD is the sshd program; run it as SSHD -D -e -f Config.
	SSHD string
	// Config is the sshd_config file.
	Config string
	// Identity is the private key of a client sshd accepts.
	Identity string
	// Log is where a test may send sshd's output.
	Log string
}

// New writes keys and an sshd_config into dir for an sshd that listens on
// listen and on each of ports. It needs sshd, ssh-keygen and ssh.
func New(t testing.TB, dir, listen string, ports ...string) *Server {
	t.Helper()
	s := &Server{
		SSHD:     testtool.Find(t, "sshd"),
		Config:   filepath.Join(dir, "sshd_config"),
		Identity: filepath.Join(dir, "id"),
		Log:      filepath.Join(dir, "sshd.log"),
	}
	keygen := testtool.Find(t, "ssh-keygen")
	testtool.Find(t, "ssh")
	for _, key := range []string{"host_key", "id"} {
		out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, key)).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, err := os.ReadFile(s.Identity + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		// sshd started by root insists on its privilege separation directory.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var config strings.Builder
	for _, port := range ports {
		fmt.Fprintf(&config, "Port %s\n", port)
	}
	fmt.Fprintf(&config, `ListenAddress %s
HostKey %[2]s/host_key
AuthorizedKeysFile %[2]s/authorized_keys
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
`, listen, dir)
	if err := os.WriteFile(s.Config, []byte(config.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}
