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

// TestKueueAdmitsOneJobAtATime submits two jobs together behind a
// ClusterQueue with room for exactly one, two MPIJobs, then two
// PyTorchJobs: Kueue must admit each as one Workload, launcher or master
// included, so the second waits whole, no pod of it placed and no
// launcher or master failing, until the first has ended and released its
// quota; then it runs to its end too.
func TestKueueAdmitsOneJobAtATime(t *testing.T) {
	for _, tt := range []struct {
		kind, manifest, name string
		// ends is the suffix of the Job whose end is the job's: the
		// launcher's or the master's.
		ends string
		// quota is room for one job of three pods.
		quota func(t *testing.T) corev1.ResourceList
		// check judges what a job's pods printed.
		check func(t *testing.T, s *submission, job string)
	}{
		{kind: "MPIJob", manifest: "../../examples/jobs/pi.yaml", name: "pi", ends: "-launcher", quota: func(t *testing.T) corev1.ResourceList {
			// pi's pods each ask for 1Gi, and for the CPU the node fits
			// every container to.
			return corev1.ResourceList{corev1.ResourceCPU: mustQuantity(t, node.CPU, 3), corev1.ResourceMemory: mustQuantity(t, "1Gi", 3)}
		}, check: func(t *testing.T, s *submission, job string) {
			assert.Regexp(t, piLine, s.logs("batch.kubernetes.io/job-name="+job+"-launcher", ""), "%s's launcher printed no pi", job)
		}},
		{kind: "PyTorchJob", manifest: "testdata/torch-static.yaml", name: "torch-static", ends: "-master", quota: func(*testing.T) corev1.ResourceList {
			// The pods ask for no resources: Kueue counts them.
			return corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3")}
		}, check: func(t *testing.T, s *submission, job string) {
			checkAllReduce(t, s.logs("training.kubeflow.org/job-name="+job, ""), 3, 3)
		}},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			t.Parallel()
			queue := kueueQueue(t, tt.quota(t))
			jobs := []string{tt.name + "-first", tt.name + "-second"}
			manifests := []string{queue.localQueue, queue.config}
			for _, job := range jobs {
				manifests = append(manifests, renamed(t, tt.manifest, tt.name, job))
			}
			s := submit(t, manifests, nil)
			oneAtATime(t, s, jobs, tt.ends)
			for _, job := range jobs {
				s.succeed(job+tt.ends, time.Second)
				tt.check(t, s, job)
			}
			quotaReleased(t, s, queue, len(jobs), 3)
		})
	}
}

// oneAtATime watches jobs that share room for one until each has ended:
// never more Workloads than jobs, no pod of a job placed while another,
// placed first, has not ended, and no attempt of the Job named by ends
// failing.
func oneAtATime(t *testing.T, s *submission, jobs []string, ends string) {
	t.Helper()
	ctx := context.Background()
	var first string           // the job admitted first
	ended := map[string]bool{} // jobs that have ended
	deadline := time.Now().Add(2 * jobTimeout)
	for len(ended) < len(jobs) {
		require.True(t, time.Now().Before(deadline), "the jobs did not all end within %s; ended: %v", 2*jobTimeout, ended)
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
			end, err := kube.Client.BatchV1().Jobs(s.ns).Get(ctx, job+ends, metav1.GetOptions{})
			require.NoError(t, err)
			require.Zero(t, end.Status.Failed, "%s failed while it queued or ran:\n%s", end.Name, s.describe())
			if finished(end) {
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
}

// quotaReleased requires one Workload per job, each of every pod of its
// job, and that each finishes and frees the ClusterQueue's quota.
func quotaReleased(t *testing.T, s *submission, queue queue, jobs int, pods int64) {
	t.Helper()
	ctx := context.Background()
	wls, err := kube.Workloads(ctx, s.ns)
	require.NoError(t, err)
	require.Len(t, wls, jobs, "one Workload per job: %v", wls)
	for _, wl := range wls {
		assert.Equal(t, pods, wl.Pods, "Workload %s does not hold every pod of its job", wl.Name)
	}
	quotaFreed(t, s, queue)
}

// quotaFreed requires that every Workload of the namespace finishes and
// that the ClusterQueue then reserves nothing, within two minutes: workers
// the launcher could not tell are stopped by the reconciler after a grace
// of 30 s.
func quotaFreed(t *testing.T, s *submission, queue queue) {
	t.Helper()
	require.NoError(t, kube.Wait(context.Background(), "the Workloads to finish and the quota to be released", 2*time.Minute, func(ctx context.Context) error {
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
		config:       writeFile(t, "trainfn.yaml", cluster.KueueFunctionConfig("jobs", "")),
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

// TestKueueResizesAnElasticJob runs an elastic MPIJob and an elastic
// PyTorchJob under Kueue and resizes their workers 2 → 3 → 2 through the
// workers' Job's parallelism, which the reconciler first sets to 2 (the
// render leaves it out): Kueue admits a Workload of
// each size before the new workers start, and the job sees each count, the
// MPIJob's launcher through the discovery script Horovod reads, the
// PyTorchJob's agents by forming a world of that many. When the job ends,
// its Workloads finish and its quota is released.
func TestKueueResizesAnElasticJob(t *testing.T) {
	for _, tt := range []struct {
		kind, manifest, workers string
		// sees waits until the job sees n workers, the count's step-th.
		sees func(s *submission, n, step int)
		// end ends the job as its program would, and waits for it.
		end func(s *submission)
	}{
		{kind: "MPIJob", manifest: "testdata/elastic-discovery.yaml", workers: "elastic-worker", sees: func(s *submission, n, _ int) {
			var want []string
			for i := range n {
				want = append(want, fmt.Sprintf("elastic-worker-%d.elastic", i))
			}
			s.seesHosts(s.runningPod("batch.kubernetes.io/job-name=elastic-launcher", jobTimeout), strings.Join(want, " "), 3*time.Minute)
		}, end: func(s *submission) {
			s.kubectl(nil, "exec", "job/elastic-launcher", "--", "touch", "/tmp/done")
			s.succeed("elastic-launcher", time.Minute)
		}},
		{kind: "PyTorchJob", manifest: "testdata/torch-elastic-membership.yaml", workers: "torch-elastic-worker", sees: func(s *submission, n, step int) {
			s.formsWorld("torch-elastic-worker", n, step+1, 3*time.Minute)
		}, end: func(s *submission) {
			pods, err := s.workerPods(context.Background(), "torch-elastic-worker")
			require.NoError(s.t, err)
			require.NotEmpty(s.t, pods[0], "no worker 0 to end the job in")
			s.kubectl(nil, "exec", pods[0], "--container", "pytorch", "--", "touch", "/tmp/done")
			s.succeed("torch-elastic-worker", 2*time.Minute)
		}},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			t.Parallel()
			// Room for the launcher and 3 workers.
			queue := kueueQueue(t, corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("100"),
				corev1.ResourceMemory: resource.MustParse("1Ti"),
				corev1.ResourcePods:   resource.MustParse("4"),
			})
			// The workers stop when the job ends, so that their Workload
			// finishes.
			data, err := os.ReadFile(tt.manifest)
			require.NoError(t, err)
			manifest := strings.Replace(string(data), "\nspec:\n", "\nspec:\n  runPolicy:\n    cleanPodPolicy: Running\n", 1)
			s := submit(t, []string{queue.localQueue, queue.config, writeFile(t, "job.yaml", manifest)}, nil)
			for step, n := range []int{2, 3, 2} {
				began := time.Now()
				if step > 0 {
					s.kubectl(nil, "patch", "job/"+tt.workers, "--type=merge", "-p", fmt.Sprintf(`{"spec":{"parallelism":%d}}`, n))
				}
				tt.sees(s, n, step)
				workersAdmitted(t, s, tt.workers, int64(n))
				// Workers the Job controller removes when the count
				// drops are not failures: it takes their tracking
				// finalizer off before it deletes them.
				w, err := kube.Client.BatchV1().Jobs(s.ns).Get(context.Background(), tt.workers, metav1.GetOptions{})
				require.NoError(t, err)
				require.Zero(t, w.Status.Failed, "the workers' Job counts failed pods after %d workers:\n%s", n, s.describe())
				t.Logf("%d workers: seen by the job and admitted by Kueue %s after the change", n, time.Since(began).Round(10*time.Millisecond))
			}
			tt.end(s)
			quotaFreed(t, s, queue)
		})
	}
}

// workersAdmitted requires that the one Workload of the workers' Job not
// finished is admitted with n pods.
func workersAdmitted(t *testing.T, s *submission, workers string, n int64) {
	t.Helper()
	require.NoError(t, kube.Wait(context.Background(), fmt.Sprintf("a Workload of %d workers admitted", n), time.Minute, func(ctx context.Context) error {
		wls, err := kube.Workloads(ctx, s.ns)
		if err != nil {
			return err
		}
		var open []cluster.Workload
		for _, wl := range wls {
			if wl.Owner == "Job/"+workers && !wl.Finished {
				open = append(open, wl)
			}
		}
		if len(open) != 1 || !open[0].Admitted || open[0].Pods != n {
			return fmt.Errorf("the workers' Workloads not finished are %v, not one admitted of %d pods", open, n)
		}
		return nil
	}), s.describe())
}
