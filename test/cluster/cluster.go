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
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// Options shape a cluster.
type Options struct {
	// Nodes is the number of fake nodes; 3 when zero.
	Nodes int
	// NodeResources are resources every fake node offers beside, or
	// instead of, its default capacity: the devices that jobs ask for.
	NodeResources corev1.ResourceList
	// ControlPlaneNode adds one more fake node, marked as kubeadm marks a
	// control-plane node (label and NoSchedule taint), for the pods that
	// ask to run on one.
	ControlPlaneNode bool
	// Dir keeps the cluster's files (etcd's data, keys, kubeconfigs, the
	// components' logs); a temporary folder, removed by Stop, when empty.
	Dir string
	// SchedulerNames are the names of schedulers that do not run here
	// (Volcano's, say) that kube-scheduler answers to besides its own, as
	// profiles of its own: pods that name one are placed, though not by
	// the scheduler they name.
	SchedulerNames []string
	// Address is the API server's address, loopback when empty. A real
	// node's pods reach the API server through the kubernetes Service,
	// which may not point at a loopback address: the node package gives
	// the address of its bridge.
	Address string
	// NoFakeNodes leaves kwok out: the nodes are real kubelets, which the
	// node package starts.
	NoFakeNodes bool
	// PodCIDR is where kwok takes the fake pods' IPs from; PodCIDR when
	// empty. A range of 127.0.0.0/8 gives every pod an address this
	// machine can send from (net.Dialer's LocalAddr) as the pod would, so
	// that a server on loopback sees a request come from the pod's own
	// address: the API server takes such pod IPs, though a Service's
	// endpoints cannot hold them.
	PodCIDR string
	// Users are more identities the API server knows, by name, with their
	// groups; KubeconfigOf(name) is the path of each one's kubeconfig.
	Users map[string][]string
	// Controllers are more of kube-controller-manager's controllers to run.
	Controllers []string
	// APIServerFlags are more of kube-apiserver's flags.
	APIServerFlags []string
	// Detach leaves the components running when this process ends, each
	// with a pid file in Dir, for Kill to end them: a cluster that
	// outlives the command that started it.
	Detach bool
	// NodeMonitorGracePeriod is how long a node may go without a word
	// before the node lifecycle controller takes it for lost. Five minutes
	// when zero: kwok renews the fake nodes' leases, but a loaded machine
	// may starve it for a while, and a node taken for lost would have
	// every pod on it marked not ready for the rest of the run. Real
	// kubelets, which a lost node's test stops, want Kubernetes' own.
	NodeMonitorGracePeriod time.Duration
}

// Cluster is a running control plane.
type Cluster struct {
	// Dir holds the cluster's files, the components' logs among them.
	Dir string
	// Kubeconfig is the path of a cluster administrator's kubeconfig.
	Kubeconfig string
	Config     *rest.Config
	Client     kubernetes.Interface

	bins        map[string]string // component paths by name
	ca          string            // the API server's certificate
	kubeconfigs map[string]string // by user
	procs       []*process
	removeDir   bool
	detach      bool
}

// running are the components a cluster runs.
var running = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// The controllers a job's objects need: Jobs and StatefulSets make pods,
// endpoint controllers fill Services, the garbage collector follows owner
// references, and the node lifecycle controller lifts the not-ready taint
// the API server puts on every new node once kwok reports it ready.
// Namespaces and service accounts are what every namespace needs to run pods;
// the volume binder binds the claims a job's pods mount, as a user provides
// them, to their volumes; the PodGroup protection controller lets a
// PodGroup go once no pod names it.
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
	"persistentvolume-binder-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
	"podgroup-protection-controller",
}

// featureGates are the gates every component runs with: Kubernetes' own
// gang scheduling (KEP-4671), beta and off by default in 1.37, which
// trainfn renders for: the scheduling.k8s.io PodGroup in the API server,
// the GangScheduling plugin in kube-scheduler, and the PodGroup
// protection controller in the controller manager.
const featureGates = "GenericWorkload=true"

// Start brings a control plane up and returns once its fake nodes are ready
// to take pods. On error, nothing it started is left running.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	c = &Cluster{Dir: opts.Dir, bins: map[string]string{}, detach: opts.Detach}
	components := running
	if opts.NoFakeNodes {
		components = slices.DeleteFunc(slices.Clone(running), func(name string) bool { return name == "kwok" })
	}
	for _, name := range components {
		if c.bins[name], err = Binary(name); err != nil {
			return nil, err
		}
	}
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
	etcd, err := c.startEtcd(ctx)
	if err != nil {
		return c, err
	}
	if err = c.startAPIServer(ctx, etcd, opts); err != nil {
		return c, err
	}
	if err = c.startControllers(opts); err != nil {
		return c, err
	}
	if opts.NoFakeNodes {
		return c, nil
	}
	if err = c.addNodes(ctx, opts.Nodes, opts.ControlPlaneNode, opts.NodeResources); err != nil {
		return c, err
	}
	return c, nil
}

// startEtcd starts etcd and returns its client URL once it is healthy.
func (c *Cluster) startEtcd(ctx context.Context) (string, error) {
	ports, err := freePorts(2)
	if err != nil {
		return "", err
	}
	url := "http://127.0.0.1:" + ports[0]
	peer := "http://127.0.0.1:" + ports[1]
	err = c.run("etcd",
		"--data-dir", filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls", url, "--advertise-client-urls", url,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default="+peer,
		// A test cluster's data may be lost with the machine; syncing every
		// write to disk only slows the API server down.
		"--unsafe-no-fsync",
		"--log-level", "warn",
	)
	if err != nil {
		return "", err
	}
	return url, c.Wait(ctx, "etcd", time.Minute, func(ctx context.Context) error { return healthy(ctx, url+"/health") })
}

// startAPIServer starts the API server over etcd, writes a kubeconfig for
// each of the cluster's users, and returns once it is ready.
func (c *Cluster) startAPIServer(ctx context.Context, etcd string, opts Options) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	address := opts.Address
	users, err := newUsers(opts.Users)
	if err != nil {
		return err
	}
	// The kubernetes Service may not point at a loopback address; on
	// loopback, nothing calls the API server through it.
	reconciler := "none"
	if address == "" {
		address = "127.0.0.1"
	} else {
		reconciler = "lease"
	}
	tokens := filepath.Join(c.Dir, "tokens.csv")
	saKey := filepath.Join(c.Dir, "service-account.key")
	pki := filepath.Join(c.Dir, "pki")
	if err = writeTokenFile(tokens, users...); err != nil {
		return err
	}
	if err = writeServiceAccountKey(saKey); err != nil {
		return err
	}
	err = c.run("kube-apiserver", append([]string{
		"--etcd-servers", etcd,
		"--bind-address", address, "--advertise-address", address,
		"--secure-port", ports[0],
		// The API server writes a self-signed serving certificate here;
		// every client trusts exactly that certificate.
		"--cert-dir", pki,
		"--token-auth-file", tokens,
		// Node: a kubelet may read only what its pods use.
		"--authorization-mode", "Node,RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", saKey,
		"--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--allow-privileged",
		"--endpoint-reconciler-type", reconciler,
		"--feature-gates", featureGates,
		// A beta API is served only when asked for.
		"--runtime-config", "scheduling.k8s.io/v1beta1=true",
	}, opts.APIServerFlags...)...)
	if err != nil {
		return err
	}
	c.ca = filepath.Join(pki, "apiserver.crt")
	if err = c.Wait(ctx, "kube-apiserver's certificate", time.Minute, func(context.Context) error {
		// Written in place: only a whole certificate parses.
		_, err := certutil.CertsFromFile(c.ca)
		return err
	}); err != nil {
		return err
	}
	server := "https://" + net.JoinHostPort(address, ports[0])
	c.kubeconfigs = map[string]string{}
	for _, u := range users {
		if c.kubeconfigs[u.name], err = writeKubeconfig(c.Dir, server, c.ca, u); err != nil {
			return err
		}
	}
	c.Kubeconfig = c.kubeconfigs[adminUser]
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return err
	}
	// Tests share this client and poll with it in parallel; client-go's
	// default of 5 requests a second would queue them behind each other.
	c.Config.QPS = -1
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	return c.Wait(ctx, "kube-apiserver", 2*time.Minute, func(ctx context.Context) error {
		return c.Client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	})
}

// KubeconfigOf is the path of the kubeconfig of one of Options.Users;
// empty for a user the cluster does not know.
func (c *Cluster) KubeconfigOf(user string) string { return c.kubeconfigs[user] }

// startControllers starts what turns objects into running pods: the
// controller manager, the scheduler, and kwok in the kubelets' place
// unless real nodes take it.
func (c *Cluster) startControllers(opts Options) error {
	grace := opts.NodeMonitorGracePeriod
	if grace == 0 {
		grace = 5 * time.Minute
	}
	err := c.run("kube-controller-manager",
		"--kubeconfig", c.kubeconfigs[controllerManagerUser],
		"--controllers", strings.Join(append(slices.Clone(controllers), opts.Controllers...), ","),
		"--use-service-account-credentials",
		"--root-ca-file", c.ca,
		"--leader-elect=false",
		"--secure-port=0",
		"--node-monitor-grace-period", grace.String(),
		"--feature-gates", featureGates,
	)
	if err != nil {
		return err
	}
	// Given a configuration file, kube-scheduler ignores --kubeconfig and
	// --leader-elect: the file says both.
	config := filepath.Join(c.Dir, "kube-scheduler.yaml")
	if err = os.WriteFile(config, []byte(schedulerConfig(c.kubeconfigs[schedulerUser], opts.SchedulerNames)), 0o644); err != nil {
		return err
	}
	err = c.run("kube-scheduler",
		"--config", config,
		"--secure-port=0",
		"--feature-gates", featureGates,
	)
	if err != nil || opts.NoFakeNodes {
		return err
	}
	podCIDR := opts.PodCIDR
	if podCIDR == "" {
		podCIDR = PodCIDR
	}
	config = filepath.Join(c.Dir, "kwok.yaml")
	if err = os.WriteFile(config, []byte(kwokStages()), 0o644); err != nil {
		return err
	}
	return c.run("kwok",
		"--config", config,
		"--kubeconfig", c.kubeconfigs[kwokUser],
		"--manage-nodes-with-annotation-selector", fakeNodeAnnotation+"=fake",
		"--cidr", podCIDR,
		"--node-ip", "10.243.0.1",
		// Without a configuration file of its own, kwok renews no node
		// leases unless given their duration; the node lifecycle
		// controller takes a node without one for lost.
		"--node-lease-duration-seconds", "40",
	)
}

// schedulerConfig is kube-scheduler's configuration: its default profile,
// and one more, alike, for each other scheduler name it answers to.
func schedulerConfig(kubeconfig string, names []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
`, kubeconfig)
	for _, name := range names {
		fmt.Fprintf(&b, "- schedulerName: %q\n", name)
	}
	return b.String()
}

// run starts a component and keeps it for Stop.
func (c *Cluster) run(name string, args ...string) error {
	return c.Run(name, c.bins[name], args...)
}

// Run starts one more process beside the control plane (a kubelet, say),
// logged and stopped with it, the last started the first stopped. One of
// the same name that has ended (a kubelet that gave up, say) is dropped
// first: kept, it would fail every later Wait as a component that exited.
func (c *Cluster) Run(name, binary string, args ...string) error {
	if i := c.proc(name); i >= 0 && c.procs[i].failed() != nil {
		c.procs = slices.Delete(c.procs, i, i+1)
	}
	p, err := start(c.Dir, name, binary, c.detach, args...)
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

func healthy(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
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
		defer l.Close() //nolint:gocritic // deferInLoop: every port stays held until all are found
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}

// Connect is a cluster that another process started (make node, say),
// known by an administrator's kubeconfig: Stop leaves it running.
func Connect(ctx context.Context, kubeconfig string) (*Cluster, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	config.QPS = -1
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		return nil, err
	}
	return &Cluster{Dir: filepath.Dir(kubeconfig), Kubeconfig: kubeconfig, Config: config, Client: client}, nil
}
