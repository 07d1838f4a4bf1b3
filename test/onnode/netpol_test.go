//go:build e2e

package onnode

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// TestRshPolicyIsEnforced proves that the nodes enforce the Rsh mode's
// NetworkPolicy (each runs kube-network-policies, test/node): rshd runs
// any command as root for whoever reaches it, and the policy is all that
// keeps other pods from it. While an Rsh MPIJob's ranks wait, pods beside
// it in its namespace, on every node, try to connect to each worker's
// rshd: over the bridge of the worker's own node, and routed from
// another. Those that carry the labels the policy admits, the job's own,
// which its launcher has, connect; those of another job, the same image,
// command and nodes, time out, their first packet dropped. The launcher
// then runs pi over rsh to the end.
func TestRshPolicyIsEnforced(t *testing.T) {
	needNodes(t, 2)
	t.Parallel()
	const job = "pi-rsh-policy"
	ctx := context.Background()
	s := submit(t, []string{"testdata/nodes/pi-rsh-policy.yaml"}, nil)
	policy, err := kube.Client.NetworkingV1().NetworkPolicies(s.ns).Get(ctx, job+"-rsh", metav1.GetOptions{})
	require.NoError(t, err, "the Rsh mode's NetworkPolicy")
	require.Len(t, policy.Spec.Ingress, 1, "the policy's ingress rules")
	require.Len(t, policy.Spec.Ingress[0].From, 1, "the peers the policy admits")
	admitted := policy.Spec.Ingress[0].From[0].PodSelector.MatchLabels
	require.NotEmpty(t, admitted, "the labels of the pods the policy admits")
	// Started now, the probes are running by the time the workers serve.
	probes := s.startProbes(admitted, map[string]string{"training.kubeflow.org/job-name": "another-job", "training.kubeflow.org/operator-name": "trainfn"})
	s.launcherReaches(job+"-launcher", "rsh", 2, jobTimeout)
	workers := s.servingWorkers(job)
	s.podsRunning(slices.Collect(maps.Keys(probes)), time.Minute)

	results := s.probeAll(probes, workers)
	for _, r := range results {
		path := "routed from another node"
		if r.probe.node == r.worker.Spec.NodeName {
			path = "over the bridge of its node"
		}
		t.Logf("%s (%s) -> %s:514, %s: %s", r.probe.name, r.probe.kind, r.worker.Spec.Hostname, path, strings.Join(r.tries, ", "))
		if r.probe.admitted {
			assert.Equal(t, "CONNECTED", r.tries[len(r.tries)-1], "%s, which the policy admits, connecting to %s %s", r.probe.name, r.worker.Spec.Hostname, path)
		} else {
			assert.Equal(t, []string{"TIMEOUT", "TIMEOUT", "TIMEOUT"}, r.tries, "%s, of another job, connecting to %s %s", r.probe.name, r.worker.Spec.Hostname, path)
		}
	}
	// A worker gone would time the strangers out as well: each was there
	// all along, serving rsh until the launcher tells it the job ended.
	for _, w := range workers {
		pod, err := kube.Client.CoreV1().Pods(s.ns).Get(ctx, w.Name, metav1.GetOptions{})
		require.NoError(t, err)
		serving := pod.Status.Phase == corev1.PodRunning && len(pod.Status.ContainerStatuses) > 0
		for _, c := range pod.Status.ContainerStatuses {
			serving = serving && c.State.Running != nil && c.RestartCount == 0
		}
		require.True(t, serving, "%s ended before the probes did, and they prove nothing: the ranks' wait is too short for this machine", w.Name)
	}

	s.succeed(job+"-launcher", jobTimeout)
	out := s.logs("batch.kubernetes.io/job-name="+job+"-launcher", "")
	t.Logf("the launcher printed:\n%s", out)
	checkPi(t, out, job, 2, 2, 0)
}

// probePod is a pod beside a job that tries to reach its workers.
type probePod struct {
	name, node string
	// kind says what it is; admitted, whether it carries the labels the
	// job's NetworkPolicy admits.
	kind     string
	admitted bool
}

// startProbes starts, on every node, a pod with the admitted labels and
// one with the stranger's, both idle until probeAll runs in them.
func (s *submission) startProbes(admitted, stranger map[string]string) map[string]probePod {
	s.t.Helper()
	probes := map[string]probePod{}
	for i, m := range kube.Members {
		for _, p := range []probePod{
			{name: fmt.Sprintf("admitted-%d", i+1), kind: "the job's labels", admitted: true},
			{name: fmt.Sprintf("stranger-%d", i+1), kind: "another job's labels"},
		} {
			p.node = m.Name
			labels := stranger
			if p.admitted {
				labels = admitted
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: p.name, Labels: labels},
				Spec: corev1.PodSpec{
					NodeName:                      p.node,
					RestartPolicy:                 corev1.RestartPolicyNever,
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{
						Name: "probe", Image: kube.Images["openmpi"],
						Command: []string{"sleep", "infinity"},
					}},
				},
			}
			_, err := kube.Client.CoreV1().Pods(s.ns).Create(context.Background(), pod, metav1.CreateOptions{})
			require.NoError(s.t, err, "creating the probe %s", p.name)
			probes[p.name] = p
		}
	}
	return probes
}

// launcherReaches waits until the launcher's wait has found n workers
// accepting its remote shell: they serve it from then on.
func (s *submission) launcherReaches(launcher, shell string, n int, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for strings.Count(s.logs("batch.kubernetes.io/job-name="+launcher, ""), " accepts "+shell+"\n") < n {
		require.True(s.t, time.Now().Before(deadline), "the launcher did not reach its %d workers by %s within %s", n, shell, within)
		time.Sleep(250 * time.Millisecond)
	}
}

// servingWorkers are the job's running worker pods, with their addresses.
func (s *submission) servingWorkers(job string) []corev1.Pod {
	s.t.Helper()
	pods, err := kube.Client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: "training.kubeflow.org/job-name=" + job + ",training.kubeflow.org/job-role=worker",
	})
	require.NoError(s.t, err)
	var running []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			running = append(running, p)
		}
	}
	require.Len(s.t, running, 2, "the running workers of %s", job)
	return running
}

// podsRunning waits until each of the pods named runs, with an address:
// the nodes' agents learn it from the API server, as they learn the
// pod's labels.
func (s *submission) podsRunning(names []string, within time.Duration) {
	s.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			pod, err := kube.Client.CoreV1().Pods(s.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
				return false, nil
			}
		}
		return true, nil
	})
	require.NoError(s.t, err, "the probes %v did not run within %s", names, within)
}

// probeScript tries to connect to port 514 of the address it is given up
// to three times, five seconds each, and says how each try ended: a
// dropped first packet times out, a port nobody serves is refused. It
// stops at the first that connects: the agents learn a new pod's address
// from the API server's watch, a moment after the pod runs, and judge
// its packets by its labels only from then on.
const probeScript = `for try in 1 2 3; do
  timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/514"' "$1" 2>/dev/null
  case $? in
  0) echo CONNECTED; exit 0 ;;
  124) echo TIMEOUT ;;
  *) echo REFUSED; sleep 1 ;;
  esac
done`

var probeResult = regexp.MustCompile(`(?m)^(CONNECTED|TIMEOUT|REFUSED)$`)

// probed is how one probe's tries to reach one worker ended.
type probed struct {
	probe  probePod
	worker corev1.Pod
	tries  []string
}

// probeAll runs the probe script in every probe pod against every worker,
// all at once, so that each runs while the workers serve.
func (s *submission) probeAll(probes map[string]probePod, workers []corev1.Pod) []probed {
	s.t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []probed
		errs    []error
	)
	for _, name := range slices.Sorted(maps.Keys(probes)) {
		for _, w := range workers {
			wg.Go(func() {
				out, err := s.kubectlOutput(nil, "exec", name, "--container", "probe", "--", "bash", "-c", probeScript, "probe", w.Status.PodIP)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				var tries []string
				for _, m := range probeResult.FindAllStringSubmatch(out, -1) {
					tries = append(tries, m[1])
				}
				if len(tries) == 0 {
					errs = append(errs, fmt.Errorf("the probe %s printed no result: %q", name, out))
					return
				}
				results = append(results, probed{probe: probes[name], worker: w, tries: tries})
			})
		}
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(s.t, err)
	}
	slices.SortFunc(results, func(a, b probed) int {
		return strings.Compare(a.probe.name+" "+a.worker.Name, b.probe.name+" "+b.worker.Name)
	})
	return results
}
