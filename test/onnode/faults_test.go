//go:build e2e

package onnode

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/node"
)

// midRun is how long after mpirun starts a fault strikes: its ranks start
// fifteen seconds after it does (testdata/pi-slow.yaml).
const midRun = 5 * time.Second

// TestWorkerDeletedMidRun stops a worker's pod while mpirun runs, by
// deleting it or by evicting it through the Eviction API, and requires the
// job to succeed at the launcher's first attempt, whatever its
// restartPolicy (OnFailure, mpi-operator's, or Never): the workers' Job
// makes the worker again under the same hostname (its work.sh exits 143
// when stopped, so the index is not complete), mpirun fails while the
// worker is not there, and the launcher, taking that for a disruption,
// waits for the workers again and runs mpirun again in the same attempt.
func TestWorkerDeletedMidRun(t *testing.T) {
	for _, tt := range []struct{ manifest, name, how string }{
		{"testdata/pi-slow.yaml", "pi-slow", "deleted"},
		{"testdata/pi-slow-never.yaml", "pi-slow-never", "deleted"},
		{"testdata/pi-slow.yaml", "pi-slow", "evicted"},
	} {
		t.Run(tt.name+"/"+tt.how, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			launcher := tt.name + "-launcher"
			s := submit(t, []string{tt.manifest}, nil)
			s.runningPod("batch.kubernetes.io/job-name="+launcher, jobTimeout)
			s.mpirunStarts(launcher, 2, jobTimeout)
			time.Sleep(midRun)
			pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + tt.name + "-worker"})
			require.NoError(t, err)
			var victim string
			for _, p := range pods.Items {
				if strings.HasPrefix(p.Name, tt.name+"-worker-1-") {
					victim = p.Name
				}
			}
			require.NotEmpty(t, victim, "no pod of worker 1")
			if tt.how == "evicted" {
				require.NoError(t, kube.Client.CoreV1().Pods(s.ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim, Namespace: s.ns}}))
			} else {
				require.NoError(t, kube.Client.CoreV1().Pods(s.ns).Delete(ctx, victim, metav1.DeleteOptions{}))
			}
			t.Logf("%s %s %s after kubectl apply", tt.how, victim, time.Since(s.began).Round(10*time.Millisecond))

			// The Job's end deletes a launcher pod it restarted in place:
			// its attempts are counted while it runs.
			var attempts int
			stop := s.whileRunning(func() { attempts = max(attempts, s.launcherAttempts(launcher)) })
			succeeded, took := s.finish(launcher, jobTimeout)
			stop()
			out := s.logs("batch.kubernetes.io/job-name="+launcher, "")
			t.Logf("the launcher's Job ended %s after kubectl apply, succeeded: %t, after %d attempts:\n%s", took.Round(10*time.Millisecond), succeeded, attempts, out)
			require.True(t, succeeded, "the job failed")
			assert.Contains(t, out, "a disruption, not the command", "mpirun did not fail when its worker went: the fault did not strike")
			assert.Equal(t, 1, attempts, "the launcher's attempts: a disruption spends none")
			checkPi(t, out, tt.name, 2, 2, 0)
			worker, err := kube.Client.CoreV1().Pods(s.ns).Get(ctx, victim, metav1.GetOptions{})
			if err == nil {
				assert.NotEqual(t, corev1.PodSucceeded, worker.Status.Phase, "a stopped worker does not count as done")
			}
		})
	}
}

// TestContainerdRestartedMidRun restarts the node's containerd while mpirun
// runs: the containers run on under their shims, and the job succeeds at
// its first attempt.
func TestContainerdRestartedMidRun(t *testing.T) {
	if !kube.Started() {
		t.Skip("the node is make node's: only its own process restarts its containerd")
	}
	// Not parallel: every other test's pods are on this containerd.
	s := submit(t, []string{"testdata/pi-slow.yaml"}, nil)
	s.runningPod("batch.kubernetes.io/job-name=pi-slow-launcher", jobTimeout)
	time.Sleep(midRun)
	require.NoError(t, kube.RestartContainerd(context.Background()))
	t.Logf("restarted containerd %s after kubectl apply", time.Since(s.began).Round(10*time.Millisecond))
	s.succeed("pi-slow-launcher", jobTimeout)
	checkPi(t, s.logs("batch.kubernetes.io/job-name=pi-slow-launcher", ""), "pi-slow", 2, 2, 0)
	assert.Equal(t, 1, s.launcherAttempts("pi-slow-launcher"), "mpirun's attempts")
}

// TestReconcilerDeletedMidScale deletes the reconciler's pod as an elastic
// job is scaled up: its Deployment starts another, which picks the change
// up, and the launcher sees every worker.
func TestReconcilerDeletedMidScale(t *testing.T) {
	// Not parallel: the reconciler serves every other test's jobs.
	ctx := context.Background()
	s := submit(t, []string{"testdata/elastic-discovery.yaml"}, nil)
	launcher := s.runningPod("batch.kubernetes.io/job-name=elastic-launcher", jobTimeout)
	s.seesHosts(launcher, "elastic-worker-0.elastic elastic-worker-1.elastic", 3*time.Minute)
	s.kubectl(nil, "scale", "statefulset/elastic-worker", "--replicas=3")
	require.NoError(t, kube.Client.CoreV1().Pods(node.ReconcilerNamespace).DeleteCollection(ctx,
		metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + node.ReconcilerRelease}))
	began := time.Now()
	s.seesHosts(launcher, "elastic-worker-0.elastic elastic-worker-1.elastic elastic-worker-2.elastic", 3*time.Minute)
	t.Logf("with the reconciler's pod deleted, the launcher listed 3 workers %s after the scale", time.Since(began).Round(10*time.Millisecond))
	s.kubectl(nil, "exec", launcher, "--", "touch", "/tmp/done")
	s.succeed("elastic-launcher", time.Minute)
}

// whileRunning calls sample every half second until the returned stop is
// called, which returns once the last call is done.
func (s *submission) whileRunning(sample func()) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			sample()
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// launcherAttempts is how many times the launcher's main container ran:
// its pods, and each pod's restarts.
func (s *submission) launcherAttempts(job string) int {
	// Called from a goroutine too: no require here.
	pods, err := kube.Client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
	if err != nil {
		return 0
	}
	attempts := 0
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			attempts += 1 + int(c.RestartCount)
		}
	}
	return attempts
}

// mpirunStarts waits until the launcher's wait has seen its workers accept
// SSH, after which launch.sh starts mpirun.
func (s *submission) mpirunStarts(launcher string, workers int, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for strings.Count(s.logs("batch.kubernetes.io/job-name="+launcher, ""), " accepts SSH\n") < workers {
		require.True(s.t, time.Now().Before(deadline), "the launcher's mpirun did not start within %s", within)
		time.Sleep(250 * time.Millisecond)
	}
}

// TestPyTorchWorkerDeletedMidRun deletes a worker of a static PyTorchJob
// while its processes train: the workers' Job makes the pod again under
// the same hostname, the other agents' processes fail and are restarted in
// place (restartPolicy OnFailure), and torchrun forms the whole world
// again, as training-operator's restart would; the job then succeeds.
func TestPyTorchWorkerDeletedMidRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := submit(t, []string{"testdata/torch-static-membership.yaml"}, nil)
	master := s.runningPod("batch.kubernetes.io/job-name=torch-lost-master", jobTimeout)
	s.worldsSeen(master, 1, 3, jobTimeout)
	pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "training.kubeflow.org/replica-type=worker"})
	require.NoError(t, err)
	var victim string
	for _, p := range pods.Items {
		if p.Spec.Hostname == "torch-lost-worker-1" && p.DeletionTimestamp == nil {
			victim = p.Name
		}
	}
	require.NotEmpty(t, victim, "no pod of worker 1")
	require.NoError(t, kube.Client.CoreV1().Pods(s.ns).Delete(ctx, victim, metav1.DeleteOptions{}))
	t.Logf("deleted %s %s after kubectl apply", victim, time.Since(s.began).Round(10*time.Millisecond))
	s.worldsSeen(master, 2, 3, jobTimeout)
	s.kubectl(nil, "exec", master, "--container", "pytorch", "--", "touch", "/tmp/done")
	s.succeed("torch-lost-master", jobTimeout)
}

// worldsSeen waits until the pod's processes have reported n worlds of
// the given size in all, across its container's restarts.
func (s *submission) worldsSeen(pod string, n, size int, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		seen := 0
		for _, previous := range []bool{true, false} {
			out, _ := kube.Client.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{Container: "pytorch", Previous: previous}).DoRaw(context.Background())
			for _, m := range worldLine.FindAllStringSubmatch(string(out), -1) {
				if m[3] == strconv.Itoa(size) {
					seen++
				}
			}
		}
		if seen >= n {
			s.t.Logf("%s reported %d worlds of %d", pod, seen, size)
			return
		}
		require.True(s.t, time.Now().Before(deadline), "%s reported %d worlds of %d, not %d, within %s", pod, seen, size, n, within)
		time.Sleep(500 * time.Millisecond)
	}
}

// TestDIJobWorkerLostMidRun stops a worker of a DIJob that is not
// preemptible while it works, by deleting its pod or evicting it through
// the Eviction API. Its Indexed Job makes the worker again under the same
// hostname and the job succeeds, as DI-orchestrator's restart of a worker
// that exits unexpectedly would have it. A deletion costs one of the job's
// retries (backoffLimit 1); an eviction none, by the Job's pod failure
// policy.
func TestDIJobWorkerLostMidRun(t *testing.T) {
	for _, how := range []string{"deleted", "evicted"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := submit(t, []string{"testdata/dijob-static.yaml"}, nil)
			rank1 := "batch.kubernetes.io/job-name=di-static-worker,batch.kubernetes.io/job-completion-index=1"
			victim := s.runningPod(rank1, jobTimeout)
			s.printed(victim, "rank=1 host=di-static-worker-1 started", jobTimeout)
			if how == "evicted" {
				require.NoError(t, kube.Client.CoreV1().Pods(s.ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim, Namespace: s.ns}}))
			} else {
				require.NoError(t, kube.Client.CoreV1().Pods(s.ns).Delete(ctx, victim, metav1.DeleteOptions{}))
			}
			t.Logf("%s %s %s after kubectl apply", how, victim, time.Since(s.began).Round(10*time.Millisecond))

			s.succeed("di-static-worker", jobTimeout)
			out := s.logs(rank1, "")
			assert.Contains(t, out, "rank=1 host=di-static-worker-1 started\nrank=1 done\n", "the worker made again")
			assert.NotContains(t, out, victim, "the stopped pod is gone")
			job, err := kube.Client.BatchV1().Jobs(s.ns).Get(ctx, "di-static-worker", metav1.GetOptions{})
			require.NoError(t, err)
			failed := int32(1)
			if how == "evicted" {
				failed = 0
			}
			assert.Equal(t, failed, job.Status.Failed, "failed pods the Job counted")
			assert.Equal(t, int32(2), job.Status.Succeeded)
		})
	}
}

// printed waits until the pod's main container has printed line.
func (s *submission) printed(pod, line string, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		out, _ := kube.Client.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(context.Background())
		if strings.Contains(string(out), line+"\n") {
			return
		}
		require.True(s.t, time.Now().Before(deadline), "%s did not print %q within %s:\n%s", pod, line, within, out)
		time.Sleep(250 * time.Millisecond)
	}
}
