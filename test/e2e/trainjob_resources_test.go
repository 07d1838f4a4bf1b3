//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestTrainJobGPURequestNeedsItsLimit holds trainfn's refusal of a
// TrainJob whose resourcesPerNode requests a GPU with no limit (Kueue's
// MultiKueue page writes it so) to the API server's: with the limit the
// GPU asks, the TrainJob renders and the API server takes its Jobs; the
// same Jobs without the limit, as trainfn rendered them before it
// refused the TrainJob, the API server refuses, in the words trainfn's
// refusal uses (render/trainjob/testdata/v1alpha1/error-gpu-requests-only).
func TestTrainJobGPURequestNeedsItsLimit(t *testing.T) {
	input, err := os.ReadFile(filepath.Join("..", "..", "render", "trainjob", "testdata", "v1alpha1", "error-gpu-requests-only", "input.yaml"))
	require.NoError(t, err)
	const requested = "        nvidia.com/gpu: \"1\"\n"
	require.Contains(t, string(input), requested)
	limited := strings.Replace(string(input), requested, requested+"      limits:\n"+requested, 1)
	objs := renderRevision(t, limited)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, serverSideApply(ctx, kube.Namespace(t), objs), "the TrainJob's Jobs with the GPU's limit")

	unlimited := 0
	for _, obj := range objs {
		if obj.GetKind() != "Job" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			limits, _, _ := unstructured.NestedMap(c.(map[string]any), "resources", "limits")
			if _, ok := limits["nvidia.com/gpu"]; ok {
				unstructured.RemoveNestedField(c.(map[string]any), "resources", "limits", "nvidia.com/gpu")
				unlimited++
			}
		}
		require.NoError(t, unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers"))
	}
	require.Equal(t, 1, unlimited, "the node Job's container limits the GPU")
	err = serverSideApply(ctx, kube.Namespace(t), objs)
	// trainfn's refusal names the resource's key in limits too.
	require.ErrorContains(t, err, "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources")
}
