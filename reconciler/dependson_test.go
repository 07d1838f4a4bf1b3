package reconciler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
)

func TestDependenciesMet(t *testing.T) {
	nodes := jobWith("t-node-0")
	nodes.Spec.Parallelism = new(int32(2))
	nodes.Status.Ready = new(int32(1))
	data := jobWith("t-dataset-initializer-0", batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
	model := jobWith("t-model-initializer-0")
	j := &job{jobs: []batchv1.Job{nodes, data, model}}

	for deps, want := range map[string]bool{
		"t-dataset-initializer-0=Complete":                                true,
		"t-dataset-initializer-0=Complete,t-model-initializer-0=Complete": false,
		"t-node-0=Ready":       false,
		"t-missing-0=Complete": false,
		"t-node-0":             false,
		"":                     false,
		"t-node-0=Running":     false,
	} {
		assert.Equal(t, want, j.dependenciesMet(deps), deps)
	}
	// One more pod ready, one done: every pod of the Job is.
	j.jobs[0].Status.Succeeded = 1
	assert.True(t, j.dependenciesMet("t-node-0=Ready"))
}
