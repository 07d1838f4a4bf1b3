package schemas

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Trainer v2.3.0's shipped runtimes, unchanged, are valid.
func TestTrainerShippedRuntimes(t *testing.T) {
	files, err := filepath.Glob("../examples/trainer/runtimes/*.yaml")
	require.NoError(t, err)
	more, err := filepath.Glob("../examples/trainer/runtimes/*/*/*.yaml")
	require.NoError(t, err)
	files = append(append(files, more...), "../examples/trainer/runtimes/data-cache/torch_distributed_with_cache.yaml")
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "kustomization.yaml" })
	require.Len(t, files, 9)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			v, problems := validate(yaml.MustParse(string(data)))
			require.Empty(t, problems)
			var spec struct {
				Template struct {
					Spec struct {
						ReplicatedJobs []struct {
							Replicas  *int32 `json:"replicas"`
							GroupName string `json:"groupName"`
						} `json:"replicatedJobs"`
					} `json:"spec"`
				} `json:"template"`
			}
			require.NoError(t, v.Decode("spec", &spec))
			for _, j := range spec.Template.Spec.ReplicatedJobs {
				require.NotNil(t, j.Replicas, "replicas defaulted")
				assert.Equal(t, "default", j.GroupName)
			}
		})
	}
}

func trainJob(spec string) *yaml.RNode {
	return yaml.MustParse(`
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: mnist
spec:
  runtimeRef:
    name: torch-distributed
` + spec)
}

func TestTrainJobDefaults(t *testing.T) {
	v, problems := validate(trainJob(""))
	require.Empty(t, problems)
	var spec struct {
		RuntimeRef struct{ Name, APIGroup, Kind string }
		Suspend    *bool
		ManagedBy  string
	}
	require.NoError(t, v.Decode("spec", &spec))
	assert.Equal(t, "trainer.kubeflow.org", spec.RuntimeRef.APIGroup)
	assert.Equal(t, "ClusterTrainingRuntime", spec.RuntimeRef.Kind)
	assert.Equal(t, false, *spec.Suspend)
	assert.Equal(t, "trainer.kubeflow.org/trainjob-controller", spec.ManagedBy)
}

func TestTrainerRules(t *testing.T) {
	runtime := func(spec string) *yaml.RNode {
		return yaml.MustParse(`
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: r
spec:
` + spec)
	}
	for _, c := range []struct {
		name, field, message string
		doc                  *yaml.RNode
	}{
		{"name a DNS-1035 label", "metadata.name", "metadata.name must match RFC 1035 DNS label format",
			yaml.MustParse("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: 1abc}\nspec: {runtimeRef: {name: r}}")},
		{"managedBy", "spec.managedBy", "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set",
			trainJob("  managedBy: example.com/x")},
		{"storageUri", "spec.initializer.dataset.storageUri", "storageUri may be empty, or it must be a valid URI (scheme://...)",
			trainJob("  initializer: {dataset: {storageUri: tatsu-lab/alpaca}}")},
		{"unknown field", "spec.trainer.replicas", "unknown field",
			trainJob("  trainer: {replicas: 2}")},
		{"one policy", "spec.mlPolicy", "Only one of the policy can be configured",
			runtime("  mlPolicy: {torch: {}, mpi: {}}\n  template: {}")},
		{"envInjection not node", "spec.mlPolicy.torch.envInjection.targets[0].containerNames[0]", "containerNames must not include the main node container",
			runtime("  mlPolicy: {torch: {envInjection: {targets: [{jobName: x, containerNames: [node]}]}}}\n  template: {}")},
		{"startup order and dependsOn", "spec.template.spec", "StartupPolicy and DependsOn APIs are mutually exclusive",
			runtime(`  template:
    spec:
      startupPolicy: {startupPolicyOrder: InOrder}
      replicatedJobs:
      - {name: a, template: {spec: {template: {spec: {containers: [{name: c, image: i}]}}}}}
      - {name: b, dependsOn: [{name: a, status: Ready}], template: {spec: {template: {spec: {containers: [{name: c, image: i}]}}}}}`)},
		{"template metadata as embedded", "spec.template.spec.replicatedJobs[0].template.metadata.uid", "unknown field",
			runtime("  template: {spec: {replicatedJobs: [{name: a, template: {metadata: {uid: x}}}]}}")},
		{"claim template metadata as embedded", "spec.template.spec.volumeClaimPolicies[0].templates[0].metadata.uid", "unknown field",
			runtime("  template: {spec: {volumeClaimPolicies: [{templates: [{metadata: {name: data, uid: x}}]}]}}")},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, problems := validate(c.doc)
			require.NotEmpty(t, problems)
			assert.Equal(t, c.field, problems[0].Field, "%v", problems)
			assert.Contains(t, problems[0].Message, c.message)
			// No case is a misspelling, so none gets a suggestion: a
			// field Kubernetes' ObjectMeta has and the embedded subset
			// has not once suggested its own name.
			assert.NotContains(t, problems[0].Message, "did you mean")
		})
	}
}
