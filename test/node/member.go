package node

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Member is one node of the cluster: a kubelet with a containerd, a
// kube-proxy and a NetworkPolicy agent of its own. The first member is
// this machine itself, as a one-node cluster always was: it has the bridge
// whose address the API server and CoreDNS listen on. Every other member is a machine of its
// own as far as the network goes: a network namespace, joined to this
// machine's by a veth pair, with its own bridge for its pods and its own
// iptables; this machine routes each member's pods' subnet to it. Its
// processes share this machine's mounts and cgroups, each in folders of
// its own.
type Member struct {
	// Name is the Node's name.
	Name string
	// IP is the node's address: its kubelet's, and the first member's
	// bridge's.
	IP string
	// Subnet is where its pods' addresses come from; Gateway, its bridge's
	// address, is their way out.
	Subnet, Gateway string

	index int
	// netns is the member's network namespace, empty for the machine's.
	netns string
	// uplink is the machine's end of the veth pair to netns, whose
	// address is uplinkIP.
	uplink, uplinkIP string
	// state holds what lives only while the member runs: containerd's
	// state and socket, its pods' network namespaces, its IPAM's records.
	state string
}

// MaxNodes is the most nodes a cluster here has: each takes a /24 of the
// cluster's pod addresses and a little of this machine.
const MaxNodes = 9

// Members are the members of a cluster of n nodes, the first one first.
func Members(n int) []Member {
	members := make([]Member, n)
	for i := range members {
		members[i] = member(i + 1)
	}
	return members
}

// member is the i-th member, counted from one. Pods of the i-th take
// 10.200.(i-1).0/24, inside the cluster's 10.200.0.0/16; the links
// between the machine and the others take 10.201.i.0/24.
func member(i int) Member {
	if i == 1 {
		return Member{Name: Name, IP: IP, Subnet: "10.200.0.0/24", Gateway: IP, index: 1, state: StateDir}
	}
	name := fmt.Sprintf("%s-%d", Name, i)
	return Member{
		Name:     name,
		IP:       fmt.Sprintf("10.201.%d.2", i),
		Subnet:   fmt.Sprintf("10.200.%d.0/24", i-1),
		Gateway:  fmt.Sprintf("10.200.%d.1", i-1),
		index:    i,
		netns:    name,
		uplink:   "tfn-up" + strconv.Itoa(i),
		uplinkIP: fmt.Sprintf("10.201.%d.1", i),
		state:    StateDir + "-" + strconv.Itoa(i),
	}
}

// MemberNamed is the member of that name, if the name is one a cluster
// gives: trainfn-node, trainfn-node-2, ...
func MemberNamed(name string) (Member, error) {
	if name == Name {
		return member(1), nil
	}
	if i, err := strconv.Atoi(strings.TrimPrefix(name, Name+"-")); err == nil && i >= 2 && i <= MaxNodes && name == member(i).Name {
		return member(i), nil
	}
	return Member{}, fmt.Errorf("no node is named %q: the nodes are named %s, then %s-2, %s-3 and on", name, Name, Name, Name)
}

// First tells whether this is the machine's own member.
func (m Member) First() bool { return m.index == 1 }

// proc is the name of one of the member's components, as the cluster logs
// and keeps it: the first member's are named plainly.
func (m Member) proc(component string) string {
	if m.First() {
		return component
	}
	return component + "-" + m.Name
}

// dir is where the member's configuration and its kubelet's files live
// under the cluster's folder: the first member's at its top, as before
// there were others.
func (m Member) dir(clusterDir string) string {
	if m.First() {
		return clusterDir
	}
	return filepath.Join(clusterDir, m.Name)
}

// containerdRoot keeps the member's imported images between runs.
func (m Member) containerdRoot(cache string) string {
	if m.First() {
		return filepath.Join(cache, "containerd")
	}
	return filepath.Join(cache, "containerd-"+m.Name)
}

func (m Member) containerdSocket() string { return filepath.Join(m.state, "containerd.sock") }

// command is how a program runs on the member: in its network namespace.
// nsenter enters that alone, so that the kubelet's mounts are the ones
// containerd sees, and execs the program, which keeps nsenter's pid.
func (m Member) command(binary string, args ...string) (string, []string) {
	if m.netns == "" {
		return binary, args
	}
	return "nsenter", append([]string{"--net=" + netnsPath(m.netns), "--", binary}, args...)
}

func netnsPath(name string) string { return filepath.Join("/run/netns", name) }

// plug makes the member's network: for the first, its bridge; for any
// other, its namespace, the veth pair to this machine with the routes
// both ways, and the bridge inside; and for each, the rule that queues
// what it forwards to its NetworkPolicy agent (queueRule). The network,
// and with it the rule, outlives the member's processes: a member lost
// and returned keeps both.
func (m Member) plug() error {
	if err := m.wire(); err != nil {
		return err
	}
	return m.queueToAgent()
}

// wire makes the member's links, addresses, routes and bridge: the same
// bridge for every member, in the member's namespace for all but the
// first, which is this machine's own network.
func (m Member) wire() error {
	if !m.First() {
		if err := m.uplinkUp(); err != nil {
			return err
		}
	}
	if err := ipAll(
		m.in("link", "add", Bridge, "type", "bridge"),
		m.in("addr", "add", m.Gateway+"/24", "dev", Bridge),
		m.in("link", "set", Bridge, "up"),
	); err != nil || m.First() {
		return err
	}
	return ipAll([]string{"route", "add", m.Subnet, "via", m.IP})
}

// uplinkUp makes a member's namespace and joins it to this machine by a
// veth pair, its default route through this machine.
func (m Member) uplinkUp() error {
	return ipAll(
		[]string{"netns", "add", m.netns},
		[]string{"link", "add", m.uplink, "type", "veth", "peer", "name", "eth0", "netns", m.netns},
		[]string{"addr", "add", m.uplinkIP + "/24", "dev", m.uplink},
		[]string{"link", "set", m.uplink, "up"},
		m.in("link", "set", "lo", "up"),
		m.in("addr", "add", m.IP+"/24", "dev", "eth0"),
		m.in("link", "set", "eth0", "up"),
		m.in("route", "add", "default", "via", m.uplinkIP),
	)
}

// in is an ip command acting in the member's network: this machine's for
// the first member, its namespace's for the others.
func (m Member) in(args ...string) []string {
	if m.First() {
		return args
	}
	return append([]string{"-n", m.netns}, args...)
}

// cut takes the member off the network as a machine that died would be:
// its link to this machine goes down, and with it the routes to its
// address and its pods. The first member's bridge stays, since the
// control plane listens on it; its pods' veths went with their namespaces.
func (m Member) cut() error {
	if m.First() {
		return nil
	}
	return ipAll([]string{"link", "set", m.uplink, "down"})
}

// mend brings a cut member's link back up, with the route to its pods.
func (m Member) mend() error {
	if m.First() {
		return nil
	}
	if err := ipAll([]string{"link", "set", m.uplink, "up"}); err != nil {
		return err
	}
	// The route went with the link; replace is idempotent.
	return ipAll([]string{"route", "replace", m.Subnet, "via", m.IP})
}

// unplug removes what plug made. Deleting the namespace deletes the veth
// pair and the routes through it, and its rules; the first member's queue
// rule is in the machine's own.
func (m Member) unplug() error {
	if m.First() {
		if err := m.unqueue(); err != nil {
			return err
		}
		if exec.Command("ip", "link", "show", Bridge).Run() != nil {
			return nil
		}
		return ipAll([]string{"link", "delete", Bridge})
	}
	var errs []error
	if _, err := os.Stat(netnsPath(m.netns)); err == nil {
		errs = append(errs, ipAll([]string{"netns", "delete", m.netns}))
	}
	// A process still in the namespace keeps it, and the veth pair with
	// it, past its name's removal: the machine's end goes, and the pair
	// with it.
	if exec.Command("ip", "link", "show", m.uplink).Run() == nil {
		errs = append(errs, ipAll([]string{"link", "delete", m.uplink}))
	}
	return errors.Join(errs...)
}

// plugged are the members other than the first whose namespaces exist:
// what a node that ended badly may have left.
func plugged() []Member {
	names, _ := filepath.Glob(netnsPath(Name + "-*"))
	var members []Member
	for _, path := range names {
		if m, err := MemberNamed(filepath.Base(path)); err == nil {
			members = append(members, m)
		}
	}
	return members
}

// ipAll runs ip with each set of arguments in turn, stopping at the first
// that fails.
func ipAll(commands ...[]string) error {
	for _, args := range commands {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
