package mpi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
)

// With SSHConfig, the launcher's sessions after its wait (mpirun's, its
// word at the end) ride on the connection the wait opened: the worker's
// sshd logs the launcher in once, where it does three times without it.
// All of it is real: sshd, ssh, the wait, launch.sh and the worker's
// work.sh; mpirun is an ssh session of its own, as mpirun's to a worker.
func TestLaunchSessionsShareTheWaitsConnection(t *testing.T) {
	for _, c := range []struct {
		name   string
		config bool
		logins int
	}{
		{"multiplexed", true, 1},
		{"without the configuration", false, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newSSHFixture(t)
			sshd := exec.Command(f.sshd.SSHD, "-D", "-E", f.sshd.Log, "-f", f.sshd.Config)
			require.NoError(t, sshd.Start())
			t.Cleanup(func() { _ = sshd.Process.Kill(); _ = sshd.Wait() })
			f.listening(t)
			run := t.TempDir()
			w := startWorker(t, run, "sleep", "60")
			script, dir := launchIn(t, f, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}}))
			script = strings.ReplaceAll(script, RunDir, run)
			wait := strings.ReplaceAll(WaitForWorkers(f.impl), ConfigDir, dir)
			require.NoError(t, os.WriteFile(filepath.Join(dir, WaitForWorkersKey), []byte(wait), 0o644))
			if c.config {
				f.env = []string{"OMPI_MCA_plm_rsh_args=-p " + f.port + " -i " + f.sshd.Identity + " -F " + muxConfig(t, f)}
			}

			mpirun := `ssh -n -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR $OMPI_MCA_plm_rsh_args localhost echo ran mpirun`
			out, code := f.launch(t, script, nil, "/bin/sh", "-c", mpirun)
			assert.Equal(t, 0, code, out)
			assert.Equal(t, "trainfn: localhost accepts SSH\nran mpirun\ntrainfn: told localhost the attempt ended: ended\n", out)
			assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "the job ended: %s", &w.Out)
			log, err := os.ReadFile(f.sshd.Log)
			require.NoError(t, err)
			assert.Equal(t, c.logins, strings.Count(string(log), "Accepted publickey"), "sshd's log:\n%s", log)
		})
	}
}

// muxConfig writes SSHConfig with its connections in a directory of their
// own, whose path is short enough for a socket's, and ends the wait's
// connection when the test does, rather than a minute later.
func muxConfig(t *testing.T, f *sshFixture) string {
	sockets, err := os.MkdirTemp("", "mux") //nolint:usetesting // a socket path under t.TempDir runs past the 108 bytes a socket may have
	require.NoError(t, err)
	config := filepath.Join(sockets, "config")
	require.NoError(t, os.WriteFile(config, []byte(strings.ReplaceAll(SSHConfig, RunDir, sockets)), 0o600))
	t.Cleanup(func() {
		_ = exec.Command("ssh", "-F", config, "-p", f.port, "-O", "exit", "localhost").Run()
		_ = os.RemoveAll(sockets)
	})
	return config
}
