package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/node"
)

// midRun is how long after mpirun starts a worker is stopped: the slow
// pi's ranks start fifteen seconds after mpirun does.
const midRun = 5 * time.Second

// outcome is how a job whose worker was stopped ended, from kubectl apply;
// a job that did not end in time hung.
type outcome struct {
	ended, succeeded bool
	took             time.Duration
}

// faults stops worker 1 of each system's slow pi while mpirun runs, by
// deleting its pod and then by evicting it, and prints the outcomes.
func (b *bench) faults(runs int, systems []system) error {
	if runs == 0 {
		return nil
	}
	results := map[string][]outcome{}
	for _, fault := range []string{"deleted", "evicted"} {
		for i := range runs {
			for _, s := range interleaved(systems, i) {
				ns := fmt.Sprintf("bench-%s-%s-%d", fault, s.name, i)
				if err := b.newNamespace(ns); err != nil {
					return err
				}
				o, err := b.fault(ns, s, fault)
				if err != nil {
					return fmt.Errorf("%s, worker %s, run %d: %w", s.name, fault, i+1, err)
				}
				fmt.Fprintf(os.Stderr, "%-12s worker %s, run %d: ended %t, succeeded %t, after %s\n", s.name, fault, i+1, o.ended, o.succeeded, o.took)
				results[fault+" "+s.name] = append(results[fault+" "+s.name], o)
				_ = b.kubectl(nil, "delete", "namespace", ns, "--wait=false")
			}
		}
	}
	fmt.Printf("\na worker of the slow pi stopped %s after mpirun starts, %d runs each: jobs that succeeded, median time from kubectl apply to the launcher's end\n\n", midRun, runs)
	fmt.Printf("%-36s %12s %14s\n", "", "trainfn", "mpi-operator")
	for _, fault := range []string{"deleted", "evicted"} {
		fmt.Printf("%-36s %12s %14s\n", "worker "+fault+" mid-run "+b.onNodes(), summary(results[fault+" trainfn"]), summary(results[fault+" mpi-operator"]))
	}
	return nil
}

// fault applies a system's job, stops worker 1 midRun after mpirun
// starts, and waits for the launcher's Job to end.
func (b *bench) fault(ns string, s system, how string) (outcome, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 6*time.Minute)
	defer cancel()
	began := time.Now()
	if err := b.kubectl(s.objects, "apply", "-n", ns, "-f", "-"); err != nil {
		return outcome{}, err
	}
	if err := b.n.Wait(ctx, "mpirun's start", 3*time.Minute, func(ctx context.Context) error {
		return mpirunRuns(ctx, b.n, ns, s.name == "trainfn")
	}); err != nil {
		return outcome{}, err
	}
	time.Sleep(midRun)
	victim, err := workerPod(ctx, b.n, ns, 1)
	if err != nil {
		return outcome{}, err
	}
	pods := b.n.Client.CoreV1().Pods(ns)
	if how == "evicted" {
		err = pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim, Namespace: ns}})
	} else {
		err = pods.Delete(ctx, victim, metav1.DeleteOptions{})
	}
	if err != nil {
		return outcome{}, err
	}
	return launcherEnd(ctx, b.n, ns, began), nil
}

// launcherEnd waits for the namespace's launcher Job to end, or for ctx,
// and times the outcome from since.
func launcherEnd(ctx context.Context, n *node.Node, ns string, since time.Time) outcome {
	for {
		select {
		case <-ctx.Done():
			return outcome{took: time.Since(since)}
		case <-time.After(poll):
		}
		jobs, err := n.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, j := range jobs.Items {
			if !strings.HasSuffix(j.Name, "-launcher") {
				continue
			}
			for _, c := range j.Status.Conditions {
				if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
					return outcome{ended: true, succeeded: c.Type == batchv1.JobComplete, took: time.Since(since)}
				}
			}
		}
	}
}

// summary is a cell of outcomes: how many jobs succeeded of how many, the
// median time of all, and how many hung.
func summary(outcomes []outcome) string {
	var took []time.Duration
	won, hung := 0, 0
	for _, o := range outcomes {
		took = append(took, o.took)
		if o.succeeded {
			won++
		}
		if !o.ended {
			hung++
		}
	}
	text := fmt.Sprintf("%d/%d, %s", won, len(took), median(took).Round(100*time.Millisecond))
	if hung > 0 {
		text += fmt.Sprintf(" (%d hung)", hung)
	}
	return text
}

// mpirunRuns succeeds once the launcher's mpirun has started: its
// container runs, and under trainfn its wait has seen both workers.
func mpirunRuns(ctx context.Context, n *node.Node, ns string, waits bool) error {
	launcher, err := launcherPod(ctx, n, ns)
	if err != nil {
		return err
	}
	if !waits {
		return nil
	}
	raw, err := n.Client.CoreV1().Pods(ns).GetLogs(launcher, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return err
	}
	if strings.Count(string(raw), " accepts SSH\n") < 2 {
		return fmt.Errorf("the launcher waits for its workers")
	}
	return nil
}

// workerPod is the running pod of worker i: named <job>-worker-i by
// mpi-operator, <job>-worker-i-<suffix> by the Indexed Job.
func workerPod(ctx context.Context, n *node.Node, ns string, i int) (string, error) {
	pods, err := n.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		if strings.HasSuffix(p.Name, "-worker-"+strconv.Itoa(i)) || strings.Contains(p.Name, "-worker-"+strconv.Itoa(i)+"-") {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("no running pod of worker %d in %s", i, ns)
}
