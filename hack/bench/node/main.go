// Command node times the pi example on a cluster of real nodes (make
// bench-node): through trainfn (rendered, applied, the reconciler from its
// chart) and through mpi-operator (its CRD, its controller built from its
// Go module), interleaved in the same run, each measured from its
// submission (-submit: a server-side apply from a client that runs on, as
// GitOps controllers apply; kubectl apply; by default both, in turn):
//
//   - the submission: the apply returns, and every worker's pod
//     exists (made by the worker Job's controller under trainfn, by
//     mpi-operator's controller under it);
//   - all pods Running: the launcher and every worker;
//   - the steps of the launcher's start, as the processes report them
//     (breakdown.go): every worker's name resolves in the cluster's DNS,
//     every worker's sshd listens, every worker's sshd has logged its
//     first login; the launcher printed pi, and its last line;
//   - mpirun starts: when the launcher's mpirun process starts. Under
//     mpi-operator that is its main container's start (it then retries
//     ssh until the workers answer); under trainfn, the moment its
//     launch.sh has seen every worker accept SSH and starts mpirun, read
//     from the kubelet's timestamp of the wait's last line;
//   - job succeeded: the launcher's Job is complete;
//   - workers stopped: from the launcher's end until no worker pod runs
//     (cleanPodPolicy Running), trainfn's reconciler stopped: its workers
//     end by themselves; mpi-operator's controller deletes its.
//
// It prints the median of each and trainfn's as a ratio of mpi-operator's,
// each row labelled with the cluster's node count. The cluster has -nodes
// nodes (one by default): make node's if it runs with as many, else one of
// its own. On two or more the job timed is -spread
// (test/onnode/testdata/nodes/pi.yaml: the same pi, its two workers spread
// one a node, so that its ranks talk across nodes) instead of -manifest.
// Each container requests a sliver of CPU, so that the job fits the node,
// and may use what its manifest's limit allows (the pi example's: a core;
// the spread one's names none).
// Then a worker of a slow pi (test/onnode/testdata/pi-slow.yaml) is
// deleted, and then evicted, while mpirun runs: each system's outcome and
// time from kubectl apply to the launcher's end.
// With two nodes or more, -loss-runs times (3 by default) for each system
// in turn, a node is lost under a job (-lost,
// test/onnode/testdata/nodes/pi-lost.yaml: pi as root, workers one a node,
// each rank sleeping a minute first) while its ranks run: once a rank's
// sleep runs in every worker (probed alike under both systems, by the
// processes in the workers), the node of a worker that is not the
// launcher's dies as its machine would (node.LoseMember), its Node is
// deleted once NotReady as a cloud's node controller does, and the outcome
// is timed from the loss to the launcher Job's end, ten minutes at most;
// the node comes back, ready, before the next run.
// Then, for an elastic job (test/onnode/testdata/elastic-discovery.yaml),
// how long after its workers are scaled from 2 to 3 the launcher's
// /etc/mpi/discover_hosts.sh lists the third: trainfn's reconciler writes
// the ConfigMap and touches the launcher's pod, mpi-operator writes the
// ConfigMap alone; and the kubelet alone, a ConfigMap change reaching a
// pod's file without and with a touch of the pod.
//
//	go run ./hack/bench/node -crd <mpi-operator's CRD> [-runs 5] [-nodes 1] [-loss-runs 3] ...
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/reconciler/sshkey"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/node"
)

func main() {
	var c config
	flag.IntVar(&c.runs, "runs", 5, "jobs per system")
	flag.StringVar(&c.submit, "submit", both, "how the pi example's jobs are submitted: server-side (apply from a running client, as GitOps controllers do), kubectl (kubectl apply), or both")
	flag.IntVar(&c.nodes, "nodes", 1, "nodes of the cluster; with 2 or more, the timed job is -spread")
	flag.StringVar(&c.operator, "operator", ".cache/bin/mpi-operator", "mpi-operator's controller")
	flag.StringVar(&c.crd, "crd", "", "mpi-operator's MPIJob CRD (manifests/base/kubeflow.org_mpijobs.yaml of its module)")
	flag.StringVar(&c.trainfn, "trainfn", "bin/trainfn", "the trainfn binary")
	flag.StringVar(&c.manifest, "manifest", "examples/jobs/pi.yaml", "the job, as mpi-operator reads it")
	flag.StringVar(&c.spread, "spread", "test/onnode/testdata/nodes/pi.yaml", "the job timed on 2 nodes or more: the pi example, its workers spread one a node")
	flag.StringVar(&c.elastic, "elastic", "test/onnode/testdata/elastic-discovery.yaml", "the elastic job")
	flag.IntVar(&c.elasticRuns, "elastic-runs", 3, "elastic jobs per system")
	flag.StringVar(&c.slow, "slow", "test/onnode/testdata/pi-slow.yaml", "the job a worker of is stopped mid-run")
	flag.IntVar(&c.faultRuns, "fault-runs", 3, "jobs per system and fault")
	flag.StringVar(&c.lost, "lost", "test/onnode/testdata/nodes/pi-lost.yaml", "the job a worker's node is lost under mid-run (its ranks run sleep 60 first, which the bench looks for)")
	flag.IntVar(&c.lossRuns, "loss-runs", 3, "jobs per system whose worker's node is lost, with 2 nodes or more")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench node:", err)
		os.Exit(1)
	}
}

// config is the command's flags.
type config struct {
	runs, nodes, elasticRuns, faultRuns, lossRuns                 int
	operator, crd, trainfn, manifest, spread, elastic, slow, lost string
	submit                                                        string
}

// system is a way to run the job.
type system struct {
	name string
	// objects are what is applied.
	objects []byte
	// workers are the hosts of the job's workers.
	workers []string
}

// timing is one job's figures, each from its submission.
type timing struct {
	// applied: the submission returned; created: every worker's pod exists.
	applied, created                    time.Duration
	running, mpirun, succeeded, stopped time.Duration
	steps
}

// bench is a run of the benchmark: the node, and kubectl on it.
type bench struct {
	ctx  context.Context
	n    *node.Node
	repo string
}

func run(c config) error {
	if c.nodes < 1 {
		return fmt.Errorf("-nodes %d: a cluster has one node or more", c.nodes)
	}
	if err := checkSubmit(c.submit); err != nil {
		return err
	}
	timed := c.manifest
	if c.nodes < 2 {
		c.lossRuns = 0
	} else {
		timed = c.spread
	}
	// A lost node's run may take its ten minutes, and its return five.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute+time.Duration(2*c.lossRuns)*15*time.Minute)
	defer cancel()
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	n, err := startCluster(ctx, filepath.Join(repo, ".cache", "node"), c.nodes)
	if err != nil {
		return err
	}
	defer n.Stop()
	b := &bench{ctx: ctx, n: n, repo: repo}
	// With the node suite's values, so that both may share make node's
	// node: the suite's DIJob counts are the DI server API's alone.
	if err := n.InstallReconciler(ctx, filepath.Join(repo, ".cache", "bin", "helm"), repo, "diJobs.enabled=true", "allocator.enabled=false"); err != nil {
		return err
	}
	stop, err := b.startOperator(c.operator, c.crd)
	if err != nil {
		return err
	}
	defer stop()
	systems, err := bothSystems(c.trainfn, timed)
	if err != nil {
		return err
	}
	submissions, err := b.submissions(c.submit, systems)
	if err != nil {
		return err
	}
	// trainfn's jobs start and end with no controller: its reconciler is
	// stopped while they run.
	if err := n.ScaleReconciler(ctx, 0); err != nil {
		return err
	}
	// On every way out, for the node make node left running, whose suite
	// needs its reconciler.
	defer func() { _ = n.ScaleReconciler(context.WithoutCancel(ctx), 1) }()
	if err := b.pi(c.runs, submissions, systems); err != nil {
		return err
	}
	slows, err := bothSystems(c.trainfn, c.slow)
	if err != nil {
		return err
	}
	if err := b.faults(c.faultRuns, slows); err != nil {
		return err
	}
	if c.lossRuns > 0 {
		losts, err := bothSystems(c.trainfn, c.lost)
		if err != nil {
			return err
		}
		if err := b.nodeLoss(c.lossRuns, losts); err != nil {
			return err
		}
	}
	if err := n.ScaleReconciler(ctx, 1); err != nil {
		return err
	}
	elastics, err := bothSystems(c.trainfn, c.elastic)
	if err != nil {
		return err
	}
	return b.elastic(c.elasticRuns, elastics)
}

// startCluster is the cluster make node left running, attached so that a
// node loss may act on its nodes, if it has as many nodes as asked; or
// else a cluster of its own, which Stop ends.
func startCluster(ctx context.Context, cache string, nodes int) (*node.Node, error) {
	n, err := node.Attach(ctx, filepath.Join(cache, "run"), cache)
	if err != nil {
		return node.Start(ctx, node.Options{Cache: cache, Nodes: nodes})
	}
	if len(n.Members) != nodes {
		return nil, fmt.Errorf("make node left a cluster of %d node(s) running, and -nodes is %d: make node-down first, or make node NODES=%d", len(n.Members), nodes, nodes)
	}
	return n, nil
}

// onNodes is the label of a row measured on the bench's cluster.
func (b *bench) onNodes() string {
	if len(b.n.Members) == 1 {
		return "(1 node)"
	}
	return fmt.Sprintf("(%d nodes)", len(b.n.Members))
}

// kubectl runs kubectl on the node.
func (b *bench) kubectl(stdin []byte, args ...string) error {
	cmd := exec.CommandContext(b.ctx, filepath.Join(b.repo, ".cache", "bin", "kubectl"), append([]string{"--kubeconfig", b.n.Kubeconfig}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// newNamespace makes a namespace and waits until it may take pods.
func (b *bench) newNamespace(ns string) error {
	if err := b.kubectl(nil, "create", "namespace", ns); err != nil {
		return err
	}
	return b.n.Wait(b.ctx, "the default service account of "+ns, time.Minute, func(ctx context.Context) error {
		_, err := b.n.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// startOperator installs mpi-operator: its CRD, its leader election's
// namespace, and its controller as a process of this machine, on the
// node's API server. stop ends the controller.
func (b *bench) startOperator(operator, crd string) (stop func(), err error) {
	if err := b.kubectl(nil, "apply", "--server-side", "-f", crd); err != nil {
		return nil, err
	}
	// mpi-operator exits at once if its CRD is not served yet.
	if err := b.n.Wait(b.ctx, "the MPIJob CRD", time.Minute, func(context.Context) error {
		return b.kubectl(nil, "get", "mpijobs.kubeflow.org", "--all-namespaces")
	}); err != nil {
		return nil, err
	}
	if err := b.kubectl(nil, "create", "namespace", "mpi-operator"); err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
		return nil, err
	}
	log, err := os.Create(filepath.Join(b.repo, ".cache", "bench", "mpi-operator.log"))
	if err != nil {
		return nil, err
	}
	op := exec.CommandContext(b.ctx, operator, "--kubeConfig", b.n.Kubeconfig, "--kube-api-qps", "50", "--kube-api-burst", "100")
	op.Stdout, op.Stderr = log, log
	// log is the operator's output: this process never writes to it, and
	// its Close has nothing to report.
	if err := op.Start(); err != nil {
		_ = log.Close()
		return nil, err
	}
	return func() { _ = op.Process.Kill(); _ = op.Wait(); _ = log.Close() }, nil
}

// interleaved is the systems in the order of a run: each first in turn,
// so that a slow stretch of the machine falls on both.
func interleaved(systems []system, run int) []system {
	order := slices.Clone(systems)
	if run%2 == 1 {
		slices.Reverse(order)
	}
	return order
}

// pi times the pi example through each system, submitted each way, and
// prints the medians.
func (b *bench) pi(runs int, submissions []submission, systems []system) error {
	timings := map[string]map[string][]timing{}
	for _, sub := range submissions {
		timings[sub.name] = map[string][]timing{}
	}
	for i := range runs {
		for w, sub := range submissions {
			for _, s := range interleaved(systems, i) {
				ns := fmt.Sprintf("bench-%s-%d-%d", s.name, w, i)
				if err := b.newNamespace(ns); err != nil {
					return err
				}
				t, err := measure(b.ctx, b.n, ns, s.workers, s.name == "trainfn", func() error { return sub.submit(ns, s) })
				if err != nil {
					return fmt.Errorf("%s by %s, run %d: %w", s.name, sub.name, i+1, err)
				}
				fmt.Fprintf(os.Stderr, "%-12s %s, run %d: applied %s, workers' pods %s, running %s, names %s, sshd %s, first login %s, mpirun %s, pi %s, last line %s, succeeded %s, workers stopped %s\n",
					s.name, sub.name, i+1, t.applied, t.created, t.running, t.names, t.sshd, t.answered, t.mpirun, t.printed, t.said, t.succeeded, t.stopped)
				timings[sub.name][s.name] = append(timings[sub.name][s.name], t)
				_ = b.kubectl(nil, "delete", "namespace", ns, "--wait=false")
			}
		}
	}
	for _, sub := range submissions {
		report(runs, b.onNodes(), sub.name, timings[sub.name])
	}
	return nil
}

// elastic times an elastic job's scale-up through each system, and the
// kubelet's delivery of a ConfigMap change alone, and prints the medians.
func (b *bench) elastic(runs int, systems []system) error {
	if runs == 0 {
		return nil
	}
	scales := map[string][]time.Duration{}
	var untouched, touched []time.Duration
	for i := range runs {
		for _, s := range interleaved(systems, i) {
			ns := fmt.Sprintf("bench-elastic-%s-%d", s.name, i)
			if err := b.newNamespace(ns); err != nil {
				return err
			}
			if err := b.kubectl(s.objects, "apply", "-n", ns, "-f", "-"); err != nil {
				return err
			}
			scale := func() error {
				if s.name == "trainfn" {
					return b.kubectl(nil, "scale", "-n", ns, "statefulset/elastic-worker", "--replicas=3")
				}
				return b.kubectl(nil, "patch", "-n", ns, "mpijob/elastic", "--type=merge", "-p", `{"spec":{"mpiReplicaSpecs":{"Worker":{"replicas":3}}}}`)
			}
			took, err := scaleUp(b.ctx, b.n, ns, scale)
			if err != nil {
				return fmt.Errorf("%s, elastic run %d: %w", s.name, i+1, err)
			}
			fmt.Fprintf(os.Stderr, "%-12s elastic run %d: the third host listed %s after the scale\n", s.name, i+1, took)
			scales[s.name] = append(scales[s.name], took)
			_ = b.kubectl(nil, "delete", "namespace", ns, "--wait=false")
		}
		ns := fmt.Sprintf("bench-configmap-%d", i)
		if err := b.newNamespace(ns); err != nil {
			return err
		}
		u, t, err := configMapDelivery(b.ctx, b.n, ns, b.n.Images["openmpi"])
		if err != nil {
			return fmt.Errorf("ConfigMap delivery, run %d: %w", i+1, err)
		}
		fmt.Fprintf(os.Stderr, "kubelet      run %d: a ConfigMap change reached the pod in %s untouched, %s touched\n", i+1, u, t)
		untouched, touched = append(untouched, u), append(touched, t)
		_ = b.kubectl(nil, "delete", "namespace", ns, "--wait=false")
	}
	fmt.Printf("\nan elastic job scaled from 2 to 3 workers, median of %d runs each\n\n", runs)
	x, y := median(scales["trainfn"]), median(scales["mpi-operator"])
	fmt.Printf("%-48s %12s %14s %7.2fx\n", "scale-up -> host in discover_hosts.sh "+b.onNodes(), x.Round(10*time.Millisecond), y.Round(10*time.Millisecond), float64(x)/float64(y))
	fmt.Printf("\nthe kubelet alone: a ConfigMap change reaching a mounted file, median of %d\n\n", runs)
	fmt.Printf("%-48s %12s\n", "without a touch of the pod", median(untouched).Round(10*time.Millisecond))
	fmt.Printf("%-48s %12s\n", "with a touch of the pod", median(touched).Round(10*time.Millisecond))
	return nil
}

// bothSystems is the job as each system takes it, fitted to the node:
// rendered by trainfn, and as it is for mpi-operator.
func bothSystems(trainfn, manifest string) ([]system, error) {
	source, err := os.ReadFile(manifest)
	if err != nil {
		return nil, err
	}
	rendered, err := exec.Command(trainfn, "render", manifest).Output()
	if err != nil {
		return nil, fmt.Errorf("trainfn render %s: %w", manifest, err)
	}
	job, err := yaml.Parse(string(source))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", manifest, err)
	}
	workers, err := workerHosts(job)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", manifest, err)
	}
	// With its reconciler stopped, trainfn's job is given its SSH Secret
	// as a user gives it (a secretGenerator, say); mpi-operator makes one.
	secret, err := sshSecret(job.GetName())
	if err != nil {
		return nil, err
	}
	// First, as kustomize orders a secretGenerator's Secret before the
	// Jobs whose pods mount it: a pod that reaches the kubelet before its
	// Secret waits for its volume's retry.
	rendered = append(append(secret, "---\n"...), rendered...)
	var systems []system
	for _, s := range []system{{name: "trainfn", objects: rendered}, {name: "mpi-operator", objects: source}} {
		fitted, err := node.Fit(s.objects, nil)
		if err != nil {
			return nil, err
		}
		systems = append(systems, system{s.name, fitted, workers})
	}
	return systems, nil
}

// workerHosts are the hosts of the MPIJob's workers, <job>-worker-<i>
// under the job's Service <job>, as both systems name them.
func workerHosts(job *yaml.RNode) ([]string, error) {
	replicas, err := job.Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", "Worker", "replicas"))
	if err != nil || replicas == nil {
		return nil, fmt.Errorf("spec.mpiReplicaSpecs.Worker.replicas: required, the bench names the workers from it (%v)", err)
	}
	n, err := strconv.Atoi(replicas.YNode().Value)
	if err != nil {
		return nil, fmt.Errorf("spec.mpiReplicaSpecs.Worker.replicas: must be a whole number: %w", err)
	}
	hosts := make([]string, n)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("%s-%d.%s", handoff.WorkersName(job.GetName()), i, job.GetName())
	}
	return hosts, nil
}

// sshSecret is the SSH Secret of the job, with a new key.
func sshSecret(job string) ([]byte, error) {
	data, err := sshkey.Generate()
	if err != nil {
		return nil, err
	}
	return sigsyaml.Marshal(corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: handoff.SSHSecretName(job)},
		Type:       corev1.SecretTypeSSHAuth,
		Data:       data,
	})
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// poll is how often the job's pods and Jobs are read.
const poll = 50 * time.Millisecond

// measure applies the job and times it by polling its pods and its
// launcher's Job. waits tells that the launcher's container waits for
// the workers before it starts mpirun (trainfn's launch.sh).
func measure(ctx context.Context, n *node.Node, ns string, workers []string, waits bool, apply func() error) (t timing, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	logs := newPodLogs(ctx, n, ns)
	began := time.Now()
	if err := apply(); err != nil {
		return t, err
	}
	t.applied = time.Since(began)
	names := namesResolved(ctx, ns, workers, began)
	var ended time.Time
	for {
		select {
		case <-ctx.Done():
			return t, fmt.Errorf("not done after 5 minutes: %+v", t)
		case <-time.After(poll):
		}
		now := time.Since(began)
		pods, err := n.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		var launcher *corev1.Pod
		running, live, made := 0, 0, 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if strings.Contains(p.Name, "-launcher") {
				launcher = p
			} else if strings.Contains(p.Name, "-worker") {
				made++
				if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
					live++
				}
			}
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
			logs.follow(p)
		}
		if t.created == 0 && made >= len(workers) {
			t.created = now
		}
		if t.running == 0 && launcher != nil && live > 0 && running == len(pods.Items) {
			t.running = now
		}
		// trainfn's mpirun start is read from the launcher's log at its end.
		if !waits && t.mpirun == 0 && launcher != nil {
			for _, c := range launcher.Status.ContainerStatuses {
				if c.State.Running != nil || c.State.Terminated != nil {
					t.mpirun = now
				}
			}
		}
		if ended.IsZero() {
			if complete(ctx, n, ns) {
				ended = time.Now()
				t.succeeded = now
				if waits {
					if t.mpirun, err = mpirunStart(ctx, n, ns, launcher, began); err != nil {
						return t, err
					}
				}
			}
			continue
		}
		if live == 0 {
			t.stopped = time.Since(ended)
			logs.wait()
			t.steps = logs.steps(began)
			// Long resolved by now; zero if they never did.
			select {
			case t.names = <-names:
			default:
			}
			return t, nil
		}
	}
}

// mpirunStart is when, from began, trainfn's launch.sh started mpirun: the
// kubelet's timestamp of its wait's last line, a worker accepting SSH.
func mpirunStart(ctx context.Context, n *node.Node, ns string, launcher *corev1.Pod, began time.Time) (time.Duration, error) {
	if launcher == nil {
		return 0, fmt.Errorf("no launcher pod in %s", ns)
	}
	raw, err := n.Client.CoreV1().Pods(ns).GetLogs(launcher.Name, &corev1.PodLogOptions{Timestamps: true}).DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	var last time.Time
	for _, line := range strings.Split(string(raw), "\n") {
		stamp, text, ok := strings.Cut(line, " ")
		if !ok || !strings.HasSuffix(text, " accepts SSH") {
			continue
		}
		if last, err = time.Parse(time.RFC3339Nano, stamp); err != nil {
			return 0, err
		}
	}
	if last.IsZero() {
		return 0, fmt.Errorf("the launcher %s printed no worker accepting SSH:\n%s", launcher.Name, raw)
	}
	return last.Sub(began), nil
}

// complete reports whether the namespace's launcher Job is complete; both
// systems run the launcher as a Job named <job>-launcher.
func complete(ctx context.Context, n *node.Node, ns string) bool {
	jobs, err := n.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, j := range jobs.Items {
		if !strings.HasSuffix(j.Name, "-launcher") {
			continue
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// report prints the medians, each row labelled with the cluster's nodes.
func report(runs int, nodes, submitted string, timings map[string][]timing) {
	pick := func(name string, figure func(timing) time.Duration) time.Duration {
		var d []time.Duration
		for _, t := range timings[name] {
			d = append(d, figure(t))
		}
		return median(d)
	}
	fmt.Printf("\nthe pi example, median of %d runs each, submitted by %s\n\n", runs, submitted)
	fmt.Printf("%-54s %12s %14s %8s\n", "", "trainfn", "mpi-operator", "ratio")
	for _, m := range []struct {
		name string
		pick func(timing) time.Duration
	}{
		{"submit -> applied", func(t timing) time.Duration { return t.applied }},
		{"submit -> every worker's pod exists", func(t timing) time.Duration { return t.created }},
		{"submit -> all pods Running", func(t timing) time.Duration { return t.running }},
		{"submit -> workers' names resolve", func(t timing) time.Duration { return t.names }},
		{"submit -> workers' sshd listen", func(t timing) time.Duration { return t.sshd }},
		{"submit -> every worker's first SSH login", func(t timing) time.Duration { return t.answered }},
		{"submit -> mpirun starts", func(t timing) time.Duration { return t.mpirun }},
		{"submit -> pi printed", func(t timing) time.Duration { return t.printed }},
		{"submit -> the launcher's last line", func(t timing) time.Duration { return t.said }},
		{"submit -> job succeeded", func(t timing) time.Duration { return t.succeeded }},
		{"launcher end -> workers stopped", func(t timing) time.Duration { return t.stopped }},
	} {
		a, b := pick("trainfn", m.pick), pick("mpi-operator", m.pick)
		fmt.Printf("%-54s %12s %14s %7.2fx\n", m.name+" "+nodes, a.Round(10*time.Millisecond), b.Round(10*time.Millisecond), float64(a)/float64(b))
	}
}
