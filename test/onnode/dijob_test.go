//go:build e2e

package onnode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestDIJobCallsTheDIServer runs a preemptible DIJob whose rank 0 reaches
// the reconciler's DI server through its ClusterIP Service (CoreDNS, then
// kube-proxy), adds a replica and removes it through the API, and sees
// each count in the replicas the server lists; the job then ends as
// DI-orchestrator's does when a worker exits 0: its StatefulSet is scaled
// to zero.
func TestDIJobCallsTheDIServer(t *testing.T) {
	t.Parallel()
	s := submit(t, []string{"testdata/dijob.yaml"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The pods are gone once the job ends: what they printed is read as
	// they run. A StatefulSet's pod restarts its container, even one that
	// exited 0, until the job's end scales it away, and the pod's status
	// may name the restart only after its log does; so rank 0's finished
	// run is kept from whichever log first holds all of it. A start's log
	// only grows, and "done" is its last line.
	printed := map[string]string{}
	var rank0 string
	// Rank 0 waits for /tmp/go, which the test makes once it has read rank
	// 1's first line: on a busy node a log read can fail for seconds, and
	// the pods are gone once the job ends. A restarted rank 0 (a call that
	// failed) is a new container, which waits for a /tmp/go of its own.
	var released, rank0Container string
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.Name == "di-worker-0" && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil {
				rank0Container = p.Status.ContainerStatuses[0].ContainerID
			}
			for _, previous := range []bool{false, true} {
				out, err := kube.Client.CoreV1().Pods(s.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: previous}).DoRaw(ctx)
				if err != nil || len(out) == 0 {
					continue
				}
				key := p.Name
				if previous {
					key += " before a restart"
				}
				printed[key] = string(out)
				if p.Name == "di-worker-0" && rank0 == "" && strings.Contains(string(out), "\ndone\n") {
					rank0 = string(out)
				}
			}
		}
		if rank0Container != "" && released != rank0Container && strings.Contains(printed["di-worker-1"], "rank=1 ") &&
			s.exec("di-worker-0", "di-container", "touch", "/tmp/go") == nil {
			released = rank0Container
		}
		set, err := kube.Client.AppsV1().StatefulSets(s.ns).Get(ctx, "di-worker", metav1.GetOptions{})
		return err == nil && set.Spec.Replicas != nil && *set.Spec.Replicas == 0, nil
	})
	require.NoError(t, err, "the workers' StatefulSet was not scaled to zero, the job did not end:\n%v", printed)
	t.Logf("the job ended %s after kubectl apply; its pods printed %v", time.Since(s.began).Round(10*time.Millisecond), printed)
	require.NotEmpty(t, rank0, "no run of rank 0 printed done")
	assert.Contains(t, rank0, "rank=0 job="+s.ns+".di.1 attach=\n")
	assert.Contains(t, printed["di-worker-1"], "rank=1 job="+s.ns+".di.1 attach=--attach-to=tcp://di-worker-0.di:22270")
	var seen []string
	for _, line := range strings.Split(rank0, "\n") {
		if n, ok := strings.CutPrefix(line, "replicas: "); ok {
			seen = append(seen, strings.Fields(n)[0])
		}
	}
	assert.Equal(t, []string{"2", "3", "2"}, seen, "the replica counts rank 0 saw")
	assert.Eventually(t, func() bool { return argoHealth(t, s, "di") == "Healthy" }, time.Minute, time.Second, "a succeeded DIJob, in Argo CD")
}
