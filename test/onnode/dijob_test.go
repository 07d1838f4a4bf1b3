//go:build e2e

package onnode

import (
	"context"
	"fmt"
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
	// they run, one entry per start of a pod's container. A StatefulSet's
	// pod restarts its container, even one that exited 0, until the job's
	// end scales it away, so rank 0's finished run may already be the
	// previous one when it is read.
	printed := map[string]string{}
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			var restarts int32
			for _, c := range p.Status.ContainerStatuses {
				restarts = c.RestartCount
			}
			if out, err := kube.Client.CoreV1().Pods(s.ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx); err == nil && len(out) > 0 {
				printed[start(p.Name, restarts)] = string(out)
			}
			if restarts == 0 {
				continue
			}
			if out, err := kube.Client.CoreV1().Pods(s.ns).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true}).DoRaw(ctx); err == nil && len(out) > 0 {
				printed[start(p.Name, restarts-1)] = string(out)
			}
		}
		set, err := kube.Client.AppsV1().StatefulSets(s.ns).Get(ctx, "di-worker", metav1.GetOptions{})
		return err == nil && set.Spec.Replicas != nil && *set.Spec.Replicas == 0, nil
	})
	require.NoError(t, err, "the workers' StatefulSet was not scaled to zero, the job did not end:\n%v", printed)
	t.Logf("the job ended %s after kubectl apply; its pods printed %v", time.Since(s.began).Round(10*time.Millisecond), printed)
	// The run of rank 0 that called the server to its end; a run before it
	// may have failed, one after it only begins again.
	var rank0 string
	for restarts := int32(0); ; restarts++ {
		out, ok := printed[start("di-worker-0", restarts)]
		if !ok {
			break
		}
		if strings.Contains(out, "\ndone\n") {
			rank0 = out
			break
		}
	}
	require.NotEmpty(t, rank0, "no run of rank 0 printed done")
	assert.Contains(t, rank0, "rank=0 job="+s.ns+".di.1 attach=\n")
	assert.Contains(t, printed[start("di-worker-1", 0)], "rank=1 job="+s.ns+".di.1 attach=--attach-to=tcp://di-worker-0.di:22270")
	var seen []string
	for _, line := range strings.Split(rank0, "\n") {
		if n, ok := strings.CutPrefix(line, "replicas: "); ok {
			seen = append(seen, strings.Fields(n)[0])
		}
	}
	assert.Equal(t, []string{"2", "3", "2"}, seen, "the replica counts rank 0 saw")
}

// start names one start of a pod's container by how many restarts came
// before it.
func start(pod string, restarts int32) string {
	return fmt.Sprintf("%s start %d", pod, restarts+1)
}
