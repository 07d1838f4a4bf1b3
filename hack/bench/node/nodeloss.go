package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/node"
)

// lossTimeout bounds a job's end after the node under one of its workers
// is lost: Kubernetes takes the node for lost after 50 s
// (node-monitor-grace-period), the pod garbage collector deletes its pods
// up to a minute after its Node is gone, the worker is made again on
// another node, and the ranks sleep a minute before pi.
const lossTimeout = 10 * time.Minute

// rankRuns succeeds in a worker where a rank of the lost job runs: each
// is `sh -c "sleep 60; exec pi"`, whose command line it finds. The bracket
// keeps the probe's own command line from matching.
const rankRuns = `grep -qsa 'sleep[ ]60' /proc/[0-9]*/cmdline`

// roleLabel tells a job's launcher from its workers, under both systems:
// mpi-operator sets it on its pods, and trainfn renders the same.
const roleLabel = "training.kubeflow.org/job-role"

// nodeLoss loses, for each system in turn, the node under a worker of the
// job that is not the launcher's while its ranks run, and prints the
// outcomes, timed from the loss to the launcher's end.
func (b *bench) nodeLoss(runs int, systems []system) error {
	results := map[string][]outcome{}
	for i := range runs {
		for _, s := range interleaved(systems, i) {
			ns := fmt.Sprintf("bench-lost-%s-%d", s.name, i)
			if err := b.newNamespace(ns); err != nil {
				return err
			}
			victim, o, err := b.loseWorkerNode(ns, s)
			if err != nil {
				return fmt.Errorf("%s, node lost, run %d: %w", s.name, i+1, err)
			}
			fmt.Fprintf(os.Stderr, "%-12s node lost, run %d: %s lost, ended %t, succeeded %t, %s after the loss\n", s.name, i+1, victim, o.ended, o.succeeded, o.took)
			results[s.name] = append(results[s.name], o)
			_ = b.kubectl(nil, "delete", "namespace", ns, "--wait=false")
		}
	}
	fmt.Printf("\nthe node of a worker that is not the launcher's lost while the ranks run, its Node deleted once NotReady, %d runs each: jobs that succeeded, median time from the loss to the launcher's end (%s at most)\n\n", runs, lossTimeout)
	fmt.Printf("%-36s %22s %22s %8s\n", "", "trainfn", "mpi-operator", "ratio")
	x, y := results["trainfn"], results["mpi-operator"]
	fmt.Printf("%-36s %22s %22s %7.2fx\n", "worker's node lost mid-run "+b.onNodes(), summary(x), summary(y), float64(medianTook(x))/float64(medianTook(y)))
	return nil
}

// loseWorkerNode applies a system's job, waits until its ranks run, loses
// the node of a worker that is not the launcher's as its machine dying
// would, deletes its Node once NotReady as a cloud's node controller does,
// and times the launcher's Job from the loss to its end. Whatever happens
// once the node is lost, it is brought back, ready, before this returns:
// for the next run, and for make node's cluster after the bench.
func (b *bench) loseWorkerNode(ns string, s system) (victim string, o outcome, err error) {
	if err := b.kubectl(s.objects, "apply", "-n", ns, "-f", "-"); err != nil {
		return "", outcome{}, err
	}
	if victim, err = b.ranksRun(ns); err != nil {
		return "", outcome{}, err
	}
	lost := time.Now()
	err = b.n.LoseMember(victim)
	defer func() { err = errors.Join(err, b.returnNode(victim)) }()
	if err != nil {
		return victim, outcome{}, err
	}
	// The Node is deleted while the job is watched: a launcher may end
	// before the node is taken for lost.
	deleted := make(chan error, 1)
	go func(name string) { deleted <- b.n.DeleteNode(b.ctx, name) }(victim)
	ctx, cancel := context.WithTimeout(b.ctx, lossTimeout)
	defer cancel()
	o = launcherEnd(ctx, b.n, ns, lost)
	return victim, o, <-deleted
}

// ranksRun waits until a rank runs in every worker of the namespace's
// job, probed the same way under both systems: mpirun has started, and
// has reached every worker. It returns the node of a worker that is not
// the launcher's.
func (b *bench) ranksRun(ns string) (string, error) {
	var victim string
	err := b.n.Wait(b.ctx, "the ranks' start", 3*time.Minute, func(ctx context.Context) error {
		launcher, workers, err := placement(ctx, b.n, ns)
		if err != nil {
			return err
		}
		victim = ""
		for pod, node := range workers {
			if err := b.kubectl(nil, "exec", "-n", ns, pod, "--", "sh", "-c", rankRuns); err != nil {
				return fmt.Errorf("no rank runs in %s yet: %w", pod, err)
			}
			if node != launcher {
				victim = node
			}
		}
		if victim == "" {
			return fmt.Errorf("every worker of %s runs on the launcher's node %s", ns, launcher)
		}
		return nil
	})
	return victim, err
}

// placement is the node of the namespace's launcher, and of each worker
// by pod name, once the launcher and every worker run.
func placement(ctx context.Context, n *node.Node, ns string) (launcher string, workers map[string]string, err error) {
	pods, err := n.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: roleLabel})
	if err != nil {
		return "", nil, err
	}
	workers = map[string]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Status.Phase != corev1.PodRunning {
			return "", nil, fmt.Errorf("pod %s is %s", p.Name, p.Status.Phase)
		}
		switch p.Labels[roleLabel] {
		case "launcher":
			launcher = p.Spec.NodeName
		case "worker":
			workers[p.Name] = p.Spec.NodeName
		}
	}
	if launcher == "" || len(workers) == 0 {
		return "", nil, fmt.Errorf("%s runs no launcher or no worker yet", ns)
	}
	return launcher, workers, nil
}

// returnNode brings a lost node back and waits until it is ready.
func (b *bench) returnNode(name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), 5*time.Minute)
	defer cancel()
	if err := b.n.ReturnMember(ctx, name); err != nil {
		return fmt.Errorf("bringing %s back: %w", name, err)
	}
	return nil
}

// medianTook is the median time of the outcomes.
func medianTook(outcomes []outcome) time.Duration {
	took := make([]time.Duration, len(outcomes))
	for i, o := range outcomes {
		took[i] = o.took
	}
	return median(took)
}
