// Package node runs a Kubernetes cluster of real nodes on this machine
// from Debian's packages and Go modules alone: the control plane of
// package cluster, and on each node (a Member) a real kubelet with
// containerd and runc, the CNI bridge plugin, kube-proxy and
// kube-network-policies, which enforces NetworkPolicy; CoreDNS with
// its kubernetes plugin beside the control plane. Pods run as real
// containers of images that hack/node-images.sh builds and this package
// imports; nothing is pulled from a registry.
//
// One cluster may run on a machine at a time: it owns the bridge trainfn0,
// the subnets and the kubelet's port. Tests start their own, or use the
// one `make node` left running.
package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/trainfn/trainfn/test/cluster"
)

// The cluster's network: the first node's bridge, whose address is that
// node's, the API server's and CoreDNS's, and the pods' addresses, a /24
// of them for each node (Member).
const (
	Bridge      = "trainfn0"
	IP          = "10.200.0.1"
	ClusterCIDR = "10.200.0.0/16"
	Name        = "trainfn-node"
	Domain      = "cluster.local"
	// kube-proxy signs in as the user Kubernetes' bootstrap policy binds
	// to system:node-proxier.
	proxyUser   = "system:kube-proxy"
	corednsUser = "trainfn:coredns"
)

// StateDir holds what lives only while the first node runs: containerd's
// state and sockets, the pods' network namespaces, the addresses handed
// out; the others' are StateDir-2, StateDir-3, ...
const StateDir = "/run/trainfn-node"

// Options shape a node.
type Options struct {
	// Dir keeps the control plane's files, the kubelet's and the logs; a
	// temporary folder, removed by Stop, when empty.
	Dir string
	// Cache is where hack/node-images.sh left the images and where
	// containerd keeps them between runs: the repository's .cache/node.
	Cache string
	// Detach leaves the node running after this process ends (make node);
	// Down stops it.
	Detach bool
	// Kueue installs Kueue once the node is ready, as its release
	// manifests do (cluster.StartKueue), for the jobs that queue.
	Kueue bool
	// Nodes is how many nodes the cluster has; one when zero.
	Nodes int
}

// Node is a running cluster of real nodes, one when Options.Nodes said
// nothing: the name is the one-node cluster's it began as.
type Node struct {
	*cluster.Cluster
	// Images are the images the nodes have, by role (openmpi, mpich,
	// torch, trainfn, ...), as hack/node-images.sh lists them.
	Images map[string]string
	// Members are the cluster's nodes, the first (this machine's own
	// network) first.
	Members []Member

	cache     string
	connected bool // started by another process, which stops it
	attached  bool // connected, and its members' processes known by pid files
}

// Start brings the cluster up: the control plane, CoreDNS, then each node
// with containerd and its images, the kubelet, kube-proxy and the
// NetworkPolicy agent; it returns once every node is ready and judges its
// packets by the NetworkPolicies, and DNS answers. Whatever a cluster that
// ended badly left behind is cleaned up first. On error, nothing it
// started is left running.
func Start(ctx context.Context, opts Options) (n *Node, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a node needs root: the kubelet mounts volumes and containerd makes namespaces")
	}
	if opts.Nodes == 0 {
		opts.Nodes = 1
	}
	if opts.Nodes < 1 || opts.Nodes > MaxNodes {
		return nil, fmt.Errorf("a cluster here has 1 to %d nodes, not %d", MaxNodes, opts.Nodes)
	}
	bins, err := binaries()
	if err != nil {
		return nil, err
	}
	images, err := readImages(opts.Cache)
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		err = cleanUp("")
	} else if err = Down(opts.Dir); err == nil {
		err = os.MkdirAll(opts.Dir, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("cleaning up after an earlier node: %w", err)
	}
	members := Members(opts.Nodes)
	for _, m := range members {
		if err := m.plug(); err != nil {
			_ = cleanUp("")
			return nil, err
		}
	}
	users := map[string][]string{proxyUser: nil, corednsUser: nil, networkPoliciesUser: nil}
	for _, m := range members {
		users[nodeUser(m)] = []string{"system:nodes"}
	}
	kube, err := cluster.Start(ctx, cluster.Options{
		Dir:         opts.Dir,
		Address:     IP,
		NoFakeNodes: true,
		Detach:      opts.Detach,
		Users:       users,
		Controllers: controllers,
		// Kubernetes' own: how long a lost node takes to be noticed is
		// part of what a job on it loses.
		NodeMonitorGracePeriod: 50 * time.Second,
		// The nodes' names are nobody's host names: the API server calls
		// a kubelet (logs, exec) at its node's address.
		APIServerFlags: []string{"--kubelet-preferred-address-types", "InternalIP"},
	})
	if err != nil {
		_ = cleanUp("")
		return nil, err
	}
	n = &Node{Cluster: kube, Images: images, Members: members, cache: opts.Cache}
	defer func() {
		if err != nil {
			n.Stop()
			n = nil
		}
	}()
	began := time.Now()
	if err = n.startDNS(ctx, bins); err != nil {
		return n, err
	}
	if err = n.grant(ctx, networkPoliciesUser, networkPoliciesRole); err != nil {
		return n, err
	}
	for _, m := range members {
		if err = n.startMember(ctx, m, bins); err != nil {
			return n, err
		}
	}
	for _, m := range members {
		if err = n.waitReady(ctx, m); err != nil {
			return n, err
		}
		if err = n.enforcing(ctx, m); err != nil {
			return n, err
		}
	}
	logf("%d node(s) ready after %s", len(members), time.Since(began).Round(time.Millisecond))
	if opts.Kueue {
		if err = n.StartKueue(ctx); err != nil {
			return n, fmt.Errorf("starting Kueue: %w", err)
		}
		logf("Kueue up after %s", time.Since(began).Round(time.Millisecond))
	}
	return n, nil
}

// controllers are those a real node's pods need beyond a fake node's: the
// Deployment and ReplicaSet controllers for the chart's reconciler, the
// disruption controller for its PodDisruptionBudget, the autoscaler for
// elastic jobs, and the taint eviction controller, which deletes the pods
// of a node lost for longer than they tolerate, as in any cluster.
var controllers = []string{"deployment-controller", "replicaset-controller", "horizontal-pod-autoscaler-controller", "disruption-controller", "taint-eviction-controller"}

// Stop takes the cluster down: on each node, the last first, the
// NetworkPolicy agent, kube-proxy and the kubelet, then every container
// and containerd; then CoreDNS and the control plane; and removes what the
// cluster left in the machine's network and mounts.
func (n *Node) Stop() {
	if n.connected {
		return
	}
	for _, m := range slices.Backward(n.Members) {
		n.StopOne(m.proc("kube-network-policies"), 10*time.Second)
		n.StopOne(m.proc("kube-proxy"), 10*time.Second)
		n.StopOne(m.proc("kubelet"), 10*time.Second)
		removeContainers(m)
		n.StopOne(m.proc("containerd"), 10*time.Second)
	}
	n.StopOne("coredns", 10*time.Second)
	unmountUnder(n.Dir)
	n.Cluster.Stop()
	if err := cleanUp(""); err != nil {
		logf("cleaning up: %v", err)
	}
}

// Down stops a cluster that Start left running in dir (make node-down), in
// Stop's order; it does nothing where none runs.
func Down(dir string) error {
	var errs []error
	members := append([]Member{member(1)}, plugged()...)
	for _, m := range slices.Backward(members) {
		errs = append(errs, cluster.Kill(dir, 10*time.Second, m.proc("kube-network-policies"), m.proc("kube-proxy"), m.proc("kubelet")))
		removeContainers(m)
		errs = append(errs, cluster.Kill(dir, 10*time.Second, m.proc("containerd")))
	}
	errs = append(errs, cluster.Kill(dir, 10*time.Second, "coredns"))
	unmountUnder(dir)
	errs = append(errs, cluster.Kill(dir, 10*time.Second))
	errs = append(errs, cleanUp(dir))
	return errors.Join(errs...)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "node: "+format+"\n", args...)
}

// file writes one of the node's configuration files into dir.
func file(dir, name, content string) (string, error) {
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, []byte(content), 0o644)
}

// Connect is the cluster that `make node` left running, if its kubeconfig
// in cache answers; Stop leaves it running.
func Connect(ctx context.Context, cache string) (*Node, error) {
	images, err := readImages(cache)
	if err != nil {
		return nil, err
	}
	kube, err := cluster.Connect(ctx, filepath.Join(cache, "kubeconfig"))
	if err != nil {
		return nil, err
	}
	n := &Node{Cluster: kube, Images: images, cache: cache, connected: true}
	if err := n.readMembers(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// Attach is the cluster that `make node` left running in dir, as Connect,
// with its nodes' processes in reach: LoseMember and ReturnMember act on
// them through their pid files (make node-stop, make node-start).
func Attach(ctx context.Context, dir, cache string) (*Node, error) {
	n, err := Connect(ctx, cache)
	if err != nil {
		return nil, err
	}
	n.Dir, n.attached = dir, true
	return n, nil
}

// Started tells whether this process started the cluster, and may restart
// and stop its parts.
func (n *Node) Started() bool { return !n.connected }
