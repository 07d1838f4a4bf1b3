// Package jobhealth holds what Flux's kustomize-controller makes of the live
// states of a job's workloads, with Flux's own readers: fluxcd/pkg's Job
// status reader (runtime/statusreaders, which kustomize-controller puts
// before kstatus for batch/Job) and kstatus for the rest. A module of its
// own, so that nothing of Flux's runtime is linked into trainfn. The same
// states feed the Argo CD health tests (hack/tools/argocd).
package jobhealth

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/runtime/statusreaders"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// entry is a live state and what Flux makes of it: the message is checked
// only where the corpus gives one.
type entry struct {
	State string `json:"state"`
	Flux  struct {
		Status  status.Status `json:"status"`
		Message string        `json:"message"`
	} `json:"flux"`
	Object json.RawMessage `json:"object"`
}

// fluxStatus is the status kustomize-controller's health check reads for
// an object: the Job reader's for a batch/v1 Job, kstatus's otherwise.
func fluxStatus(u *unstructured.Unstructured) (status.Result, error) {
	if u.GroupVersionKind().GroupKind().String() == "Job.batch" {
		return statusreaders.ComputeJobStatus(u), nil
	}
	r, err := status.Compute(u)
	if err != nil {
		return status.Result{}, err
	}
	return *r, nil
}

func TestFluxStatus(t *testing.T) {
	b, err := os.ReadFile("testdata/objects.yaml")
	require.NoError(t, err)
	var entries []entry
	require.NoError(t, yaml.Unmarshal(b, &entries))
	require.NotEmpty(t, entries)
	for _, e := range entries {
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON(e.Object), e.State)
		got, err := fluxStatus(u)
		require.NoError(t, err, e.State)
		assert.Equal(t, e.Flux.Status, got.Status, "%s: %s", e.State, got.Message)
		if e.Flux.Message != "" {
			assert.Equal(t, e.Flux.Message, got.Message, e.State)
		}
		// trainfn's labels and its ended mark change nothing: Flux reads
		// only the Job's spec and status.
		marked := u.DeepCopy()
		marked.SetLabels(map[string]string{"training.kubeflow.org/operator-name": "trainfn"})
		marked.SetAnnotations(map[string]string{"trainfn.dev/ended": "Succeeded"})
		again, err := fluxStatus(marked)
		require.NoError(t, err, e.State)
		assert.Equal(t, got, again, e.State)
	}
}
