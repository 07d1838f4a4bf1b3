// Package cluster runs a real Kubernetes control plane on loopback for
// tests: etcd, kube-apiserver (token authentication, RBAC on),
// kube-controller-manager, kube-scheduler, and kwok playing the kubelet of
// a few fake nodes. The binaries are built from their Go modules by
// hack/cluster-tools.sh; nothing runs in a container.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options shape a cluster.
type Options struct {
	// Nodes is the number of fake nodes; 3 when zero.
	Nodes int
	// Dir keeps the cluster's files (etcd's data, keys, kubeconfigs, the
	// components' logs); a temporary folder, removed by Stop, when empty.
	Dir string
}

// Cluster is a running control plane.
type Cluster struct {
	// Dir holds the cluster's files, the components' logs among them.
	Dir string
	// Kubeconfig is the path of a cluster administrator's kubeconfig.
	Kubeconfig string
	Config     *rest.Config
	Client     kubernetes.Interface

	procs     []*process
	removeDir bool
}

// The controllers a job's objects need: Jobs and StatefulSets make pods,
// endpoint controllers fill Services, the garbage collector follows owner
// references, and the node lifecycle controller lifts the not-ready taint
// the API server puts on every new node once kwok reports it ready.
// Namespaces and service accounts are what every namespace needs to run pods.
var controllers = []string{
	"job-controller",
	"statefulset-controller",
	"endpoints-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"garbage-collector-controller",
	"node-lifecycle-controller",
	"pod-garbage-collector-controller",
	"ttl-after-finished-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
}

// Start brings a control plane up and returns once its fake nodes are ready
// to take pods. On error, nothing it started is left running.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	bins := map[string]string{}
	for _, name := range Components {
		if bins[name], err = Binary(name); err != nil {
			return nil, err
		}
	}
	c = &Cluster{Dir: opts.Dir}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "trainfn-cluster-"); err != nil {
			return nil, err
		}
		c.removeDir = true
	}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return c, err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]

	admin, controllerManager, scheduler, kwok, err := newUsers()
	if err != nil {
		return c, err
	}
	tokens := filepath.Join(c.Dir, "tokens.csv")
	saKey := filepath.Join(c.Dir, "service-account.key")
	pki := filepath.Join(c.Dir, "pki")
	if err = writeTokenFile(tokens, admin, controllerManager, scheduler, kwok); err != nil {
		return c, err
	}
	if err = writeServiceAccountKey(saKey); err != nil {
		return c, err
	}

	etcdURL := "http://127.0.0.1:" + etcdClient
	peerURL := "http://127.0.0.1:" + etcdPeer
	if err = c.run("etcd", bins["etcd"],
		"--data-dir", filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL,
		// A test cluster's data may be lost with the machine; syncing every
		// write to disk only slows the API server down.
		"--unsafe-no-fsync",
		"--log-level", "warn",
	); err != nil {
		return c, err
	}
	if err = waitFor("etcd", time.Minute, c.procs, func() error { return healthy(etcdURL + "/health") }); err != nil {
		return c, err
	}

	if err = c.run("kube-apiserver", bins["kube-apiserver"],
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", apiPort,
		// The API server writes a self-signed serving certificate here;
		// every client trusts exactly that certificate.
		"--cert-dir", pki,
		"--token-auth-file", tokens,
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", saKey,
		"--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--allow-privileged",
		// The kubernetes Service may not point at a loopback address, and
		// nothing here calls the API server through it.
		"--endpoint-reconciler-type", "none",
	); err != nil {
		return c, err
	}
	server := "https://127.0.0.1:" + apiPort
	ca := filepath.Join(pki, "apiserver.crt")
	if err = waitFor("kube-apiserver's certificate", time.Minute, c.procs, func() error {
		_, err := os.Stat(ca)
		return err
	}); err != nil {
		return c, err
	}
	kubeconfigs := map[string]string{}
	for _, u := range []user{admin, controllerManager, scheduler, kwok} {
		if kubeconfigs[u.name], err = writeKubeconfig(c.Dir, server, ca, u); err != nil {
			return c, err
		}
	}
	c.Kubeconfig = kubeconfigs[admin.name]
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return c, err
	}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return c, err
	}
	if err = waitFor("kube-apiserver", 2*time.Minute, c.procs, func() error {
		return c.Client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}); err != nil {
		return c, err
	}

	if err = c.run("kube-controller-manager", bins["kube-controller-manager"],
		"--kubeconfig", kubeconfigs[controllerManager.name],
		"--controllers", strings.Join(controllers, ","),
		"--use-service-account-credentials",
		"--root-ca-file", ca,
		"--leader-elect=false",
		"--secure-port=0",
	); err != nil {
		return c, err
	}
	if err = c.run("kube-scheduler", bins["kube-scheduler"],
		"--kubeconfig", kubeconfigs[scheduler.name],
		"--leader-elect=false",
		"--secure-port=0",
	); err != nil {
		return c, err
	}
	kwokConfig := filepath.Join(c.Dir, "kwok.yaml")
	if err = os.WriteFile(kwokConfig, []byte(kwokStages()), 0o644); err != nil {
		return c, err
	}
	if err = c.run("kwok", bins["kwok"],
		"--config", kwokConfig,
		"--kubeconfig", kubeconfigs[kwok.name],
		"--manage-nodes-with-annotation-selector", fakeNodeAnnotation+"=fake",
		"--cidr", PodCIDR,
		"--node-ip", "10.243.0.1",
		// Renewed leases keep the node lifecycle controller from marking
		// the nodes, and every pod on them, not ready.
		"--node-lease-duration-seconds", "40",
	); err != nil {
		return c, err
	}
	if err = c.addNodes(ctx, opts.Nodes); err != nil {
		return c, err
	}
	return c, nil
}

// run starts a component and keeps it for Stop.
func (c *Cluster) run(name, binary string, args ...string) error {
	p, err := start(c.Dir, name, binary, args...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
}

// Stop ends every component, the last started first, and removes the
// cluster's files unless Options.Dir named them.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	c.procs = nil
	if c.removeDir {
		_ = os.RemoveAll(c.Dir)
	}
}

// Logs is the end of every component's log, for a failing test to show.
func (c *Cluster) Logs(lines int) string {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "==> %s <==\n%s\n", p.name, p.tail(lines))
	}
	return b.String()
}

func healthy(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// freePorts finds loopback ports nobody listens on, holding them all open
// together so that they differ.
func freePorts(n int) ([]string, error) {
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}
