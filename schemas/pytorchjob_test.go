package schemas

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// pytorchJob is a PyTorchJob with a master and two workers; spec adds
// fields to its spec, and the master's replicas, restart policy and
// container name vary.
func pytorchJob(spec, masterReplicas, restartPolicy, container string, workers bool) *yaml.RNode {
	worker := ""
	if workers {
		worker = `
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: train:1`
	}
	return yaml.MustParse(fmt.Sprintf(`
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: mnist
spec:
%s
  pytorchReplicaSpecs:
    Master:
      replicas: %s
      restartPolicy: %s
      template:
        spec:
          containers:
          - name: %s
            image: train:1%s
`, spec, masterReplicas, restartPolicy, container, worker))
}

func TestPyTorchJobRules(t *testing.T) {
	for _, c := range []struct {
		name, field, message string
		doc                  *yaml.RNode
	}{
		{"a container named pytorch", "spec.pytorchReplicaSpecs.Master.template.spec.containers", "needs a container named pytorch",
			pytorchJob("", "1", "OnFailure", "torch", true)},
		{"one master", "spec.pytorchReplicaSpecs.Master.replicas", "must be 1: a PyTorchJob has at most one master",
			pytorchJob("", "2", "OnFailure", "pytorch", true)},
		{"no Always", "spec.pytorchReplicaSpecs.Master.restartPolicy", "Always cannot run to completion",
			pytorchJob("", "1", "Always", "pytorch", true)},
		{"min at most max", "spec.elasticPolicy.maxReplicas", "must be at least minReplicas (3)",
			pytorchJob("  elasticPolicy: {minReplicas: 3, maxReplicas: 2}", "1", "OnFailure", "pytorch", true)},
		{"workers when elastic", "spec.pytorchReplicaSpecs.Worker", "needed with elasticPolicy",
			pytorchJob("  elasticPolicy: {minReplicas: 1}", "1", "OnFailure", "pytorch", false)},
		{"one nproc setting", "spec.nprocPerNode", "not both",
			pytorchJob("  nprocPerNode: \"2\"\n  elasticPolicy: {nProcPerNode: 2}", "1", "OnFailure", "pytorch", true)},
		{"known rendezvous", "spec.elasticPolicy.rdzvBackend", `supported values: "c10d", "etcd", "etcd-v2"`,
			pytorchJob("  elasticPolicy: {rdzvBackend: zk}", "1", "OnFailure", "pytorch", true)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, problems := validate(c.doc)
			require.Len(t, problems, 1, "%v", problems)
			assert.Equal(t, c.field, problems[0].Field)
			assert.Contains(t, problems[0].Message, c.message)
		})
	}
}

func TestPyTorchJobValid(t *testing.T) {
	_, problems := validate(pytorchJob("  nprocPerNode: \"2\"", "1", "Never", "pytorch", true))
	assert.Empty(t, problems)
}

func TestPyTorchJobNprocPerNodeDefault(t *testing.T) {
	for spec, want := range map[string]string{
		"":                                   "auto",
		"  nprocPerNode: gpu":                "gpu",
		"  elasticPolicy: {nProcPerNode: 2}": "",
	} {
		v, problems := validate(pytorchJob(spec, "1", "OnFailure", "pytorch", true))
		require.Empty(t, problems)
		var got struct {
			NprocPerNode string `json:"nprocPerNode"`
		}
		require.NoError(t, v.Decode("spec", &got))
		assert.Equal(t, want, got.NprocPerNode, spec)
	}
}
