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
)

// imageLate is how long the workers' image is missing from the node after
// the job is applied: long enough for the kubelet to have failed to pull
// it and backed off, and for the launcher to have started waiting.
const imageLate = 30 * time.Second

// TestWorkersWhoseImageIsLate applies the pi example with the workers'
// image absent from the node, makes it appear once the kubelet has given
// up pulling it for a while, and requires the job to succeed without the
// launcher failing once: wait-for-workers waits, the launcher's Job never
// counts a failure toward its backoff limit.
func TestWorkersWhoseImageIsLate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	late := "trainfn.local/late-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + ":openmpi"
	s := submit(t, []string{"../../examples/jobs/pi.yaml"}, func(obj map[string]any) {
		if obj["kind"] == "Job" && name(obj) == "pi-worker" {
			for _, c := range list(podSpec(obj), "containers") {
				c.(map[string]any)["image"] = late
			}
		}
	})
	t.Cleanup(func() { _ = kube.Untag(context.Background(), late) })

	time.Sleep(imageLate)
	pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-role=worker"})
	require.NoError(t, err)
	require.NotEmpty(t, pods.Items)
	for _, p := range pods.Items {
		require.NotEqual(t, corev1.PodRunning, p.Status.Phase, "worker %s runs an image the node does not have", p.Name)
	}
	require.NoError(t, kube.Tag(ctx, kube.Images["openmpi"], late))
	s.succeed("pi-launcher", jobTimeout)

	out := s.logs("batch.kubernetes.io/job-name=pi-launcher", "")
	checkPi(t, out, "pi", 2, 2, 1000)
	job, err := kube.Client.BatchV1().Jobs(s.ns).Get(ctx, "pi-launcher", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Zero(t, job.Status.Failed, "the launcher's failed pods")
	launchers, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=pi-launcher"})
	require.NoError(t, err)
	require.Len(t, launchers.Items, 1, "the launcher's pods")
	for _, c := range append(launchers.Items[0].Status.InitContainerStatuses, launchers.Items[0].Status.ContainerStatuses...) {
		assert.Zero(t, c.RestartCount, "restarts of the launcher's %s", c.Name)
	}
}
