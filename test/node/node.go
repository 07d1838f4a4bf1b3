// Package node runs a one-node Kubernetes cluster on this machine from
// Debian's packages and Go modules alone: the control plane of package
// cluster, a real kubelet with containerd and runc, the CNI bridge plugin,
// CoreDNS with its kubernetes plugin and kube-proxy. Pods run as real
// containers of images that hack/node-images.sh builds and this package
// imports; nothing is pulled from a registry.
//
// One node may run on a machine at a time: it owns the bridge trainfn0,
// its subnet and the kubelet's port. Tests start their own, or use the one
// `make node` left running.
package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/trainfn/trainfn/test/cluster"
)

// The node's network: a bridge of its own, whose address is the node's
// and the API server's, and the pods' subnet behind it.
const (
	Bridge   = "trainfn0"
	IP       = "10.200.0.1"
	Subnet   = "10.200.0.0/16"
	Name     = "trainfn-node"
	Domain   = "cluster.local"
	nodeUser = "system:node:" + Name
	// kube-proxy signs in as the user Kubernetes' bootstrap policy binds
	// to system:node-proxier.
	proxyUser   = "system:kube-proxy"
	corednsUser = "trainfn:coredns"
)

// StateDir holds what lives only while the node runs: containerd's state
// and sockets, the pods' network namespaces, the addresses handed out.
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
}

// Node is a running one-node cluster.
type Node struct {
	*cluster.Cluster
	// Images are the images the node has, by role (openmpi, mpich, torch,
	// trainfn, ...), as hack/node-images.sh lists them.
	Images map[string]string

	cache     string
	connected bool // started by another process, which stops it
}

// Start brings the node up: the control plane, then containerd with the
// images imported, CoreDNS, the kubelet and kube-proxy; it returns once the
// node is ready and its DNS answers. Whatever a node that ended badly left
// behind is cleaned up first. On error, nothing it started is left running.
func Start(ctx context.Context, opts Options) (n *Node, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a node needs root: the kubelet mounts volumes and containerd makes namespaces")
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
	if err := addBridge(); err != nil {
		return nil, err
	}
	kube, err := cluster.Start(ctx, cluster.Options{
		Dir:         opts.Dir,
		Address:     IP,
		NoFakeNodes: true,
		Detach:      opts.Detach,
		Users: map[string][]string{
			nodeUser:    {"system:nodes"},
			proxyUser:   nil,
			corednsUser: nil,
		},
		Controllers: controllers,
		// The node's name is nobody's host name: the API server calls
		// the kubelet (logs, exec) at the node's address.
		APIServerFlags: []string{"--kubelet-preferred-address-types", "InternalIP"},
	})
	if err != nil {
		_ = cleanUp("")
		return nil, err
	}
	n = &Node{Cluster: kube, Images: images, cache: opts.Cache}
	defer func() {
		if err != nil {
			n.Stop()
			n = nil
		}
	}()
	began := time.Now()
	if err = n.startContainerd(ctx, bins); err != nil {
		return n, err
	}
	if err = n.importImages(ctx); err != nil {
		return n, err
	}
	logf("containerd up, images in, after %s", time.Since(began).Round(time.Millisecond))
	if err = n.startDNS(ctx, bins); err != nil {
		return n, err
	}
	if err = n.startKubelet(bins); err != nil {
		return n, err
	}
	if err = n.startProxy(bins); err != nil {
		return n, err
	}
	if err = n.waitReady(ctx); err != nil {
		return n, err
	}
	logf("node ready after %s", time.Since(began).Round(time.Millisecond))
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
// disruption controller for its PodDisruptionBudget, and the autoscaler for
// elastic jobs.
var controllers = []string{"deployment-controller", "replicaset-controller", "horizontal-pod-autoscaler-controller", "disruption-controller"}

// Stop takes the node down: the kubelet and kube-proxy first, then every
// container, CoreDNS and containerd, then the control plane; and removes
// what the node left in the machine's network and mounts.
func (n *Node) Stop() {
	if n.connected {
		return
	}
	for _, name := range []string{"kube-proxy", "kubelet"} {
		n.StopOne(name, 10*time.Second)
	}
	removeContainers()
	for _, name := range []string{"coredns", "containerd"} {
		n.StopOne(name, 10*time.Second)
	}
	unmountUnder(n.Dir)
	n.Cluster.Stop()
	if err := cleanUp(""); err != nil {
		logf("cleaning up: %v", err)
	}
}

// Down stops a node that Start left running in dir (make node-down), in
// Stop's order; it does nothing where no node runs.
func Down(dir string) error {
	var errs []error
	errs = append(errs, cluster.Kill(dir, 10*time.Second, "kube-proxy", "kubelet"))
	removeContainers()
	errs = append(errs, cluster.Kill(dir, 10*time.Second, "coredns", "containerd"))
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

// Connect is the node that `make node` left running, if its kubeconfig in
// cache answers; Stop leaves it running.
func Connect(ctx context.Context, cache string) (*Node, error) {
	images, err := readImages(cache)
	if err != nil {
		return nil, err
	}
	kube, err := cluster.Connect(ctx, filepath.Join(cache, "kubeconfig"))
	if err != nil {
		return nil, err
	}
	return &Node{Cluster: kube, Images: images, cache: cache, connected: true}, nil
}

// Started tells whether this process started the node, and may restart
// and stop its parts.
func (n *Node) Started() bool { return !n.connected }
