package node

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// The cluster enforces NetworkPolicy, as one whose network plugin does:
// every member runs kube-network-policies (hack/tools/kube-network-policies)
// beside its kube-proxy, and hands it the first packet of each connection
// it forwards, to its pods or from them, to accept or drop.
const (
	networkPoliciesUser = "trainfn:network-policies"
	// policyQueue is the nfqueue a member's agent reads: one number for
	// all, each member's queue being its network namespace's own.
	policyQueue = "100"
	// nfnetlinkQueues lists the queues a process reads, in the network
	// namespace of whoever reads the file.
	nfnetlinkQueues = "/proc/net/netfilter/nfnetlink_queue"
)

// networkPoliciesRole is what the agent reads: without AdminNetworkPolicy
// (the cluster serves only the stable API), the pods, their namespaces and
// the NetworkPolicies, and no more.
var networkPoliciesRole = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods", "namespaces"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"list", "watch"}},
}

// policyAgent is kube-network-policies' command on a member, in its
// network namespace, as the member's Node: it judges the packets of every
// pod it knows, its own and the others' alike. It logs each verdict
// (--v 2), which is what a failing policy test has to go by.
func (n *Node) policyAgent(m Member, b bins) component {
	return m.component("kube-network-policies", b.networkPolicies,
		"--kubeconfig", n.KubeconfigOf(networkPoliciesUser),
		"--hostname-override", m.Name,
		"--nfqueue-id", policyQueue,
		"--v", "2",
	)
}

// queueRule is the iptables rule, with the operation given (-C, -A, -D),
// that queues the first packet of each connection the member forwards to
// its agent. The agent's own nftables table would do it, but needs the
// kernel's nft_queue, which this machine's kernel lacks: it refuses the
// table, and xtables' NFQUEUE target does the queueing instead
// (hack/tools/kube-network-policies says more). Forwarded is every
// packet to or from a pod: routed between members, or bridged between
// pods of one member, since the bridge passes its traffic through
// iptables (bridgedThroughIptables).
//
// --queue-bypass lets a packet through while no agent reads the queue:
// an agent starting, restarting, or killed with its member by
// LoseMember. Without it, every connection through the member would be
// dropped meanwhile, and the first member's, which forwards the traffic
// routed between any two others, would stall the whole cluster. The
// price is a moment without policies: Start and ReturnMember wait until
// each agent reads its queue (enforcing) before they return.
func queueRule(op string) []string {
	return []string{"-w", "5", "-t", "mangle", op, "FORWARD",
		"-m", "conntrack", "--ctstate", "NEW",
		"-j", "NFQUEUE", "--queue-num", policyQueue, "--queue-bypass"}
}

// queueToAgent adds the member's queue rule, unless it has it already.
func (m Member) queueToAgent() error {
	if m.iptables(queueRule("-C")...) == nil {
		return nil
	}
	return m.iptables(queueRule("-A")...)
}

// unqueue removes the member's queue rule, as often as it was added.
func (m Member) unqueue() error {
	for m.iptables(queueRule("-C")...) == nil {
		if err := m.iptables(queueRule("-D")...); err != nil {
			return err
		}
	}
	return nil
}

// iptables runs iptables on the member, in its network namespace.
func (m Member) iptables(args ...string) error {
	binary, in := m.command("iptables", args...)
	if out, err := exec.Command(binary, in...).CombinedOutput(); err != nil {
		return fmt.Errorf("iptables %s on %s: %w: %s", strings.Join(args, " "), m.Name, err, out)
	}
	return nil
}

// enforcing waits until the member's agent reads its queue. The agent
// opens the queue only once it has listed the pods, namespaces and
// NetworkPolicies, so from then on it judges by every policy there was;
// before, the queue rule lets every packet through.
func (n *Node) enforcing(ctx context.Context, m Member) error {
	return n.Wait(ctx, "kube-network-policies on "+m.Name, time.Minute, func(ctx context.Context) error {
		binary, args := m.command("cat", nfnetlinkQueues)
		out, err := exec.CommandContext(ctx, binary, args...).Output()
		if err != nil {
			return fmt.Errorf("reading %s on %s: %w", nfnetlinkQueues, m.Name, err)
		}
		for line := range strings.Lines(string(out)) {
			if fields := strings.Fields(line); len(fields) > 0 && fields[0] == policyQueue {
				return nil
			}
		}
		return fmt.Errorf("nothing reads the queue %s on %s yet", policyQueue, m.Name)
	})
}
