//go:build e2e

package onnode

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/node"
)

// TestKueueAdmitsOneMPIJobAtATime submits two MPIJobs together behind a
// ClusterQueue with room for exactly one: Kueue must admit each as one
// Workload, launcher included, so the second waits whole, no pod of it
// placed and no launcher failing, until the first has ended and released
// its quota; then it runs to its end too.
func TestKueueAdmitsOneMPIJobAtATime(t *testing.T) {
	t.Parallel()
	// The pi job: a launcher and two workers, each asking for 1Gi and the
	// CPU the node fits every container to.
	perJob := corev1.ResourceList{
		corev1.ResourceCPU:    mustQuantity(t, node.CPU, 3),
		corev1.ResourceMemory: mustQuantity(t, "1Gi", 3),
	}
	queue := kueueQueue(t, perJob)
	jobs := []string{"pi-first", "pi-second"}
	manifests := []string{queue.localQueue, queue.config}
	for _, job := range jobs {
		manifests = append(manifests, renamed(t, "../../examples/jobs/pi.yaml", "pi", job))
	}
	s := submit(t, manifests, nil)

	ctx := context.Background()
	var first string           // the job admitted first
	ended := map[string]bool{} // jobs whose launcher has ended
	deadline := time.Now().Add(2 * jobTimeout)
	for len(ended) < len(jobs) {
		require.True(t, time.Now().Before(deadline), "the jobs did not both end within %s; ended: %v", 2*jobTimeout, ended)
		wls, err := kube.Workloads(ctx, s.ns)
		require.NoError(t, err)
		require.LessOrEqual(t, len(wls), len(jobs), "more Workloads than jobs: %v", wls)
		pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		placed := map[string]int{}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				placed[p.Labels["training.kubeflow.org/job-name"]]++
			}
		}
		for _, job := range jobs {
			launcher, err := kube.Client.BatchV1().Jobs(s.ns).Get(ctx, job+"-launcher", metav1.GetOptions{})
			require.NoError(t, err)
			require.Zero(t, launcher.Status.Failed, "%s's launcher failed while it queued or ran:\n%s", job, s.describe())
			if finished(launcher) {
				ended[job] = true
			}
			if first == "" && placed[job] > 0 {
				first = job
			}
		}
		for _, job := range jobs {
			if first != "" && job != first && !ended[first] {
				require.Zero(t, placed[job], "%s has pods placed while %s, admitted first, has not ended: the quota holds one job", job, first)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, job := range jobs {
		s.succeed(job+"-launcher", time.Second)
		out := s.logs("batch.kubernetes.io/job-name="+job+"-launcher", "")
		assert.Regexp(t, piLine, out, "%s's launcher printed no pi", job)
	}

	// One Workload per job, every pod of the job in it; each finishes, and
	// the quota is free again.
	wls, err := kube.Workloads(ctx, s.ns)
	require.NoError(t, err)
	require.Len(t, wls, len(jobs), "one Workload per job: %v", wls)
	for _, wl := range wls {
		assert.Equal(t, int64(3), wl.Pods, "Workload %s does not hold the launcher and both workers", wl.Name)
	}
	require.NoError(t, kube.Wait(ctx, "the Workloads to finish and the quota to be released", time.Minute, func(ctx context.Context) error {
		wls, err := kube.Workloads(ctx, s.ns)
		if err != nil {
			return err
		}
		for _, wl := range wls {
			if !wl.Finished {
				return fmt.Errorf("Workload %s has not finished", wl.Name)
			}
		}
		if n, err := kube.ReservingWorkloads(ctx, queue.clusterQueue); err != nil || n != 0 {
			return fmt.Errorf("ClusterQueue %s still reserves quota for %d Workloads (%v)", queue.clusterQueue, n, err)
		}
		return nil
	}), s.describe())
}

// queue is a ClusterQueue of the test's own, and the files that queue a
// job on it: a LocalQueue and trainfn's config naming it.
type queue struct {
	clusterQueue, localQueue, config string
}

// kueueQueue makes a ClusterQueue of the test's own with the given quota,
// removed when the test ends, and the files that queue a job on it.
func kueueQueue(t *testing.T, quota corev1.ResourceList) queue {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	remove, err := kube.ClusterQueue(context.Background(), name, quota, cluster.Flavor{})
	require.NoError(t, err)
	t.Cleanup(remove)
	return queue{
		clusterQueue: name,
		localQueue:   writeFile(t, "localqueue.yaml", cluster.LocalQueue("jobs", name)),
		config: writeFile(t, "trainfn.yaml", `apiVersion: fn.trainfn.dev/v1alpha1
kind: TrainFn
metadata:
  name: trainfn
spec:
  gangScheduling:
    scheduler: Kueue
    queue: jobs
`),
	}
}

// renamed is a manifest of the repository with its job's name changed.
func renamed(t *testing.T, manifest, from, to string) string {
	t.Helper()
	data, err := os.ReadFile(manifest)
	require.NoError(t, err)
	old := "\n  name: " + from + "\n"
	require.Contains(t, string(data), old)
	return writeFile(t, to+".yaml", strings.Replace(string(data), old, "\n  name: "+to+"\n", 1))
}

func mustQuantity(t *testing.T, s string, times int64) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	require.NoError(t, err)
	q.Mul(times)
	return q
}

// finished tells whether a Job has ended, either way.
func finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestKueueReleasesTheQuotaOfAFailedJob runs an MPIJob whose launcher
// fails at every attempt under Kueue: the job fails, its workers stop, its
// Workload finishes and its quota is released, and nothing Kueue does
// brings a worker back.
func TestKueueReleasesTheQuotaOfAFailedJob(t *testing.T) {
	t.Parallel()
	queue := kueueQueue(t, corev1.ResourceList{
		corev1.ResourceCPU:    mustQuantity(t, node.CPU, 3),
		corev1.ResourceMemory: mustQuantity(t, "1Gi", 3),
	})
	s := submit(t, []string{queue.localQueue, queue.config, edited(t, "../../examples/jobs/pi.yaml", runPolicy, "Running", true)}, nil)
	succeeded, took := s.finish("pi-launcher", jobTimeout)
	require.False(t, succeeded, "the launcher's Job succeeded %s after kubectl apply, though mpirun has no program to run", took)
	s.workersStop("pi", 30*time.Second)

	ctx := context.Background()
	require.NoError(t, kube.Wait(ctx, "the Workload to finish and the quota to be released", time.Minute, func(ctx context.Context) error {
		wls, err := kube.Workloads(ctx, s.ns)
		if err != nil {
			return err
		}
		if len(wls) != 1 || !wls[0].Finished {
			return fmt.Errorf("not one finished Workload: %v", wls)
		}
		if n, err := kube.ReservingWorkloads(ctx, queue.clusterQueue); err != nil || n != 0 {
			return fmt.Errorf("ClusterQueue %s still reserves quota for %d Workloads (%v)", queue.clusterQueue, n, err)
		}
		return nil
	}), s.describe())
	time.Sleep(5 * time.Second)
	assert.Zero(t, s.runningWorkers("pi"), "a worker came back after the job failed")
}
