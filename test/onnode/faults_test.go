//go:build e2e

package onnode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/node"
)

// midRun is how long after mpirun starts a fault strikes: its ranks start
// fifteen seconds after it does (testdata/pi-slow.yaml).
const midRun = 5 * time.Second

// TestWorkerDeletedMidRun deletes a worker's pod while mpirun runs, and
// requires the job to end as its run policy says (runPolicy.backoffLimit
// 2: three attempts of the launcher), never to hang:
//   - with mpi-operator's launcher restartPolicy, OnFailure, the kubelet
//     restarts the launcher's container in its pod, without its init
//     containers: mpirun runs again at once;
//   - with restartPolicy Never, each attempt is a new pod, whose
//     wait-for-workers step waits for the workers again (for 20 seconds
//     here, TRAINFN_WAIT_TIMEOUT_SECONDS).
//
// The deleted worker does not come back: sshd exits 0 on SIGTERM, so its
// pod succeeds and the workers' Indexed Job counts its index as complete.
// The job therefore fails where mpi-operator, which makes a deleted worker
// pod again, would succeed; the test says so rather than pass as if it had.
func TestWorkerDeletedMidRun(t *testing.T) {
	for _, tt := range []struct{ manifest, name string }{
		{"testdata/pi-slow.yaml", "pi-slow"},
		{"testdata/pi-slow-never.yaml", "pi-slow-never"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			launcher := tt.name + "-launcher"
			s := submit(t, []string{tt.manifest}, func(obj map[string]any) {
				if obj["kind"] == "Job" && name(obj) == launcher {
					waitFor(obj, "20")
				}
			})
			s.runningPod("batch.kubernetes.io/job-name="+launcher, jobTimeout)
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
			require.NoError(t, kube.Client.CoreV1().Pods(s.ns).Delete(ctx, victim, metav1.DeleteOptions{}))
			t.Logf("deleted %s %s after kubectl apply", victim, time.Since(s.began).Round(10*time.Millisecond))

			// The Job's end deletes a launcher pod it restarted in place:
			// its attempts are counted while it runs, and what it printed
			// read then.
			var attempts int
			var out string
			stop := s.whileRunning(func() {
				if n := s.launcherAttempts(launcher); n > 0 {
					attempts = max(attempts, n)
					out = s.logs("batch.kubernetes.io/job-name="+launcher, "")
				}
			})
			succeeded, took := s.finish(launcher, jobTimeout)
			stop()
			if succeeded {
				out = s.logs("batch.kubernetes.io/job-name="+launcher, "")
			}
			t.Logf("the launcher's Job ended %s after kubectl apply, succeeded: %t, after %d attempts:\n%s", took.Round(10*time.Millisecond), succeeded, attempts, out)
			assert.Greater(t, attempts, 1, "mpirun did not fail when its worker went: the fault did not strike")
			if succeeded {
				checkPi(t, out, tt.name, 2, 2, 0)
				return
			}
			assert.Equal(t, 3, attempts, "the launcher's attempts: runPolicy.backoffLimit 2 allows three")
			workers, err := kube.Client.BatchV1().Jobs(s.ns).Get(ctx, tt.name+"-worker", metav1.GetOptions{})
			require.NoError(t, err)
			t.Logf("the job failed: the workers' Job counts indexes %q complete, its deleted worker's among them", workers.Status.CompletedIndexes)
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
