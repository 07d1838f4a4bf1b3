// Package netns stands up "pods" for tests that run real distributed
// programs: each pod is a network namespace with an address on one bridge,
// its own hostname, and an /etc/hosts of the test's choosing, which is how
// the test stands in for the kubelet's hosts file and cluster DNS.
//
// It needs root and iproute2; tests that cannot have them are skipped,
// unless the Makefile asks for every tool (testtool.RequireEnv).
package netns

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/trainfn/trainfn/test/testtool"
)

// Network is a bridge that pods attach to, on a /24 of its own.
type Network struct {
	t      testing.TB
	ip     string
	bridge string
	prefix string
	pods   int
}

// networks numbers the networks of this process, so that tests running in
// parallel get different bridges and subnets.
var networks atomic.Int32

// New creates a bridge, removed when the test ends.
func New(t testing.TB) *Network {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv(testtool.RequireEnv) != "" {
			t.Fatal("network namespaces need root")
		}
		t.Skip("network namespaces need root")
	}
	n := networks.Add(1)
	// Bridge names have at most 15 bytes; the pid keeps concurrent test
	// binaries apart.
	id := fmt.Sprintf("%dx%d", os.Getpid()%100000, n)
	net := &Network{
		t:      t,
		ip:     testtool.Find(t, "ip"),
		bridge: "tfn" + id,
		prefix: fmt.Sprintf("10.%d.%d.", 200+os.Getpid()%50, n%250),
	}
	net.run("link", "add", net.bridge, "type", "bridge")
	t.Cleanup(func() { _ = exec.Command(net.ip, "link", "del", net.bridge).Run() })
	net.run("addr", "add", net.prefix+"1/24", "dev", net.bridge)
	net.run("link", "set", net.bridge, "up")
	return net
}

// Pod is a network namespace on the network.
type Pod struct {
	net *Network
	// Name is the namespace's name; Hostname the pod's; IP its address.
	Name, Hostname, IP string
}

// Pod adds a pod with the given hostname, removed when the test ends.
func (n *Network) Pod(hostname string) *Pod {
	n.t.Helper()
	n.pods++
	p := &Pod{net: n, Name: fmt.Sprintf("%s-%d", n.bridge, n.pods), Hostname: hostname,
		IP: fmt.Sprintf("%s%d", n.prefix, 10+n.pods)}
	host, peer := fmt.Sprintf("v%sp%d", n.bridge[3:], n.pods), "eth0"
	n.t.Cleanup(func() {
		_ = exec.Command(n.ip, "netns", "del", p.Name).Run()
		_ = os.RemoveAll(p.etcDir())
	})
	n.run("netns", "add", p.Name)
	n.run("link", "add", host, "type", "veth", "peer", "name", peer, "netns", p.Name)
	n.run("link", "set", host, "master", n.bridge, "up")
	n.run("-n", p.Name, "addr", "add", p.IP+"/24", "dev", peer)
	n.run("-n", p.Name, "link", "set", peer, "up")
	n.run("-n", p.Name, "link", "set", "lo", "up")
	if err := p.SetHosts(nil); err != nil {
		n.t.Fatal(err)
	}
	return p
}

// HostsLine is one line of a hosts file: an address and its names.
type HostsLine struct {
	IP    string
	Names []string
}

// SetHosts makes lines the pod's /etc/hosts, after localhost's. The file
// is rewritten in place, not replaced: running pods see it through a bind
// mount of the file itself.
func (p *Pod) SetHosts(lines []HostsLine) error {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "%s\t%s\n", l.IP, strings.Join(l.Names, " "))
	}
	if err := os.MkdirAll(p.etcDir(), 0o755); err != nil {
		return err
	}
	// `ip netns exec` mounts /etc/netns/<name>/hosts over /etc/hosts.
	return os.WriteFile(filepath.Join(p.etcDir(), "hosts"), []byte(b.String()), 0o644)
}

func (p *Pod) etcDir() string { return filepath.Join("/etc/netns", p.Name) }

// Command runs argv in the pod: in its network namespace, with its hosts
// file, under its own hostname (a UTS namespace of its own). The program
// leads a process group of its own, all of which ctx's end kills, and
// which dies with the test binary.
func (p *Pod) Command(ctx context.Context, argv ...string) *exec.Cmd {
	unshare := testtool.Find(p.net.t, "unshare")
	args := append([]string{"netns", "exec", p.Name, unshare, "--uts", "--",
		"/bin/sh", "-c", `hostname "$0" && exec "$@"`, p.Hostname}, argv...)
	cmd := exec.CommandContext(ctx, p.net.ip, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

func (n *Network) run(args ...string) {
	n.t.Helper()
	if out, err := exec.Command(n.ip, args...).CombinedOutput(); err != nil {
		n.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
