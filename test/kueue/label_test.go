//go:build e2e

package kueue

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// docsQueue is the LocalQueue Kueue's docs queue their jobs on.
const docsQueue = "user-queue"

// labelledJobs are jobs as Kueue's docs write them, their queue in the
// label kueue.x-k8s.io/queue-name and nothing else for Kueue or trainfn's
// gang scheduling; the golden cases that hold them say where each was
// copied from and what was changed, and why.
var labelledJobs = []struct {
	name, input string
	// pods are the pods the job runs, all in its one Workload.
	pods int64
}{
	{name: "MPIJob", input: "mpijob/testdata/v2beta1/kueue-docs-mpijob", pods: 3},
	{name: "PyTorchJob", input: "pytorchjob/testdata/v1/kueue-docs-pytorchjob", pods: 2},
	// Its workers alone, an elastic Job admitted at the API server's
	// default of one worker: the reconciler, not run here, sets the count.
	{name: "elastic PyTorchJob", input: "pytorchjob/testdata/v1/kueue-label-elastic", pods: 1},
	{name: "TrainJob", input: "trainjob/testdata/v1alpha1/kueue-docs-trainjob", pods: 2},
}

// TestKueuesLabelAloneMakesOneWorkload renders jobs copied from Kueue's
// docs with no function config: the queue label alone must make each
// exactly one Workload, admitted with every pod of the job, and every pod
// placed; and one Workload it stays.
func TestKueuesLabelAloneMakesOneWorkload(t *testing.T) {
	for _, tt := range labelledJobs {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := testtool.Render(t, trainfn, docsInput(tt.input))
			ns := kube.Namespace(t)
			queueNamed(t, ns, docsQueue, plenty)
			apply(t, ns, out)

			ctx := context.Background()
			oneWorkload := func(ctx context.Context) error {
				wls, err := kube.Workloads(ctx, ns)
				if err != nil {
					return err
				}
				if len(wls) != 1 {
					return fmt.Errorf("%d Workloads, not one: %v", len(wls), wls)
				}
				if !wls[0].Admitted || wls[0].Pods != tt.pods {
					return fmt.Errorf("Workload %s is not admitted with the job's %d pods: %+v", wls[0].Name, tt.pods, wls[0])
				}
				placed, err := placedPods(ctx, ns)
				if err != nil {
					return err
				}
				if placed != tt.pods {
					return fmt.Errorf("%d of the job's %d pods are placed", placed, tt.pods)
				}
				return nil
			}
			require.NoError(t, kube.Wait(ctx, "one Workload admitted and the job's pods placed", time.Minute, oneWorkload), "%s", describe(ns))
			for range 6 {
				time.Sleep(500 * time.Millisecond)
				require.NoError(t, oneWorkload(ctx), "%s", describe(ns))
			}
		})
	}
}

// TestKueueRunsLabelledJobsOneAfterTheOther submits Kueue's MPIJob example
// twice, each copy labelled with its queue alone, behind a ClusterQueue
// with room for the pods of one: the second waits whole, none of its pods
// placed, until the first has finished (its pods succeed, as its
// containers exit 0), and is then admitted and placed.
func TestKueueRunsLabelledJobsOneAfterTheOther(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(docsInput("mpijob/testdata/v2beta1/kueue-docs-mpijob"))
	require.NoError(t, err)
	ns := kube.Namespace(t)
	// A launcher and two workers, each limited to a CPU and 1Gi, which
	// Kueue counts as requests: three pods.
	clusterQueue := queueNamed(t, ns, docsQueue, corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("3"),
		corev1.ResourceMemory: resource.MustParse("3Gi"),
		corev1.ResourcePods:   resource.MustParse("3"),
	})
	for _, job := range []string{"first", "second"} {
		renamed := filepath.Join(t.TempDir(), job+".yaml")
		require.NoError(t, os.WriteFile(renamed, bytes.Replace(data, []byte("name: pi\n"), []byte("name: "+job+"\n"), 1), 0o644))
		apply(t, ns, testtool.Render(t, trainfn, renamed))
		if job == "first" {
			// The first is admitted before the second exists.
			waitPlaced(t, ns, job, 3)
		}
	}

	ctx := context.Background()
	require.NoError(t, kube.Wait(ctx, "the second job's Workload, waiting", time.Minute, func(ctx context.Context) error {
		wls, err := kube.Workloads(ctx, ns)
		if err != nil {
			return err
		}
		if len(wls) != 2 {
			return fmt.Errorf("%d Workloads, not one per job: %v", len(wls), wls)
		}
		for _, wl := range wls {
			if first := jobOf(wl.Name) == "first"; first != wl.Admitted {
				return fmt.Errorf("not the first admitted and the second waiting: %v", wls)
			}
		}
		return nil
	}), "%s", describe(ns))
	for range 10 {
		byJob, err := placedByJob(ctx, ns)
		require.NoError(t, err)
		require.Zero(t, byJob["second"], "the second job has pods placed while the first holds the quota:\n%s", describe(ns))
		time.Sleep(500 * time.Millisecond)
	}

	finish(t, ns, "first")
	require.NoError(t, kube.Wait(ctx, "the first job's Workload finished, and the second admitted", time.Minute, func(ctx context.Context) error {
		wls, err := kube.Workloads(ctx, ns)
		if err != nil {
			return err
		}
		for _, wl := range wls {
			if first := jobOf(wl.Name) == "first"; first != wl.Finished || !first && !wl.Admitted {
				return fmt.Errorf("not the first finished and the second admitted: %v", wls)
			}
		}
		if n, err := kube.ReservingWorkloads(ctx, clusterQueue); err != nil || n != 1 {
			return fmt.Errorf("ClusterQueue %s reserves quota for %d Workloads, not the second's alone (%v)", clusterQueue, n, err)
		}
		return nil
	}), "%s", describe(ns))
	waitPlaced(t, ns, "second", 3)
}

// TestKueuesDefaultLocalQueueSplitsAJob queues Kueue's MPIJob example on
// a LocalQueue named default, which the render warns of: Kueue's webhook
// labels each of its Jobs, which name no queue, with that queue (Kueue's
// LocalQueue defaulting), and admits each Job as a Workload of its own,
// its pods out of the job's pod group. docs/gang-scheduling.md says so.
func TestKueuesDefaultLocalQueueSplitsAJob(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(docsInput("mpijob/testdata/v2beta1/kueue-docs-mpijob"))
	require.NoError(t, err)
	input := writeInput(t, string(bytes.Replace(data, []byte("queue-name: "+docsQueue), []byte("queue-name: default"), 1)))
	ns := kube.Namespace(t)
	queueNamed(t, ns, "default", plenty)
	apply(t, ns, testtool.Render(t, trainfn, input))
	require.NoError(t, kube.Wait(context.Background(), "a Workload for each of the job's Jobs", time.Minute, func(ctx context.Context) error {
		wls, err := kube.Workloads(ctx, ns)
		if err != nil {
			return err
		}
		owners := map[string]bool{}
		for _, wl := range wls {
			owners[wl.Owner] = true
		}
		if len(wls) != 2 || !owners["Job/pi-launcher"] || !owners["Job/pi-worker"] {
			return fmt.Errorf("not a Workload of the launcher's Job and one of the workers': %v", wls)
		}
		return nil
	}), "%s", describe(ns))
}

// docsInput is the input of a golden case copied from Kueue's docs.
func docsInput(dir string) string {
	return filepath.Join("..", "..", "render", filepath.FromSlash(dir), "input.yaml")
}

// queueNamed makes a ClusterQueue of the test's own with the quota given,
// and a LocalQueue of that name in the namespace for it; it returns the
// ClusterQueue's name.
func queueNamed(t *testing.T, ns, localQueue string, quota corev1.ResourceList) string {
	t.Helper()
	remove, err := kube.ClusterQueue(context.Background(), ns, quota, cluster.Flavor{})
	require.NoError(t, err)
	t.Cleanup(remove)
	apply(t, ns, []byte(cluster.LocalQueue(localQueue, ns)))
	return ns
}

// waitPlaced waits until n pods of a job are placed.
func waitPlaced(t *testing.T, ns, job string, n int) {
	t.Helper()
	require.NoError(t, kube.Wait(context.Background(), fmt.Sprintf("%d pods of %s placed", n, job), time.Minute, func(ctx context.Context) error {
		byJob, err := placedByJob(ctx, ns)
		if err != nil {
			return err
		}
		if byJob[job] != n {
			return fmt.Errorf("%d of %s's %d pods are placed", byJob[job], job, n)
		}
		return nil
	}), "%s", describe(ns))
}

// finish reports every pod of a job succeeded, as a kubelet reports pods
// whose containers exited 0: kwok's fake kubelets keep them running.
func finish(t *testing.T, ns, job string) {
	t.Helper()
	ctx := context.Background()
	pods := kube.Client.CoreV1().Pods(ns)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=" + job})
	require.NoError(t, err)
	require.NotEmpty(t, list.Items)
	for _, p := range list.Items {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			p.Status.Phase = corev1.PodSucceeded
			for i, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
					p.Status.Conditions[i].Status = corev1.ConditionFalse
				}
			}
			for i, c := range p.Status.ContainerStatuses {
				started := metav1.Now()
				if c.State.Running != nil {
					started = c.State.Running.StartedAt
				}
				p.Status.ContainerStatuses[i].Ready = false
				p.Status.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: metav1.Now(),
				}}
			}
			_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{FieldManager: "kubelet"})
			return err
		})
		require.NoError(t, err, "reporting pod %s succeeded", p.Name)
	}
}
