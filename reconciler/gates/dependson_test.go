package gates

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/reconciler/observed"
)

func TestDependenciesMet(t *testing.T) {
	nodes := jobWith("t-node-0")
	nodes.Spec.Parallelism = new(int32(2))
	nodes.Status.Ready = new(int32(1))
	data := jobWith("t-dataset-initializer-0", batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
	model := jobWith("t-model-initializer-0")
	j := &observed.Job{Jobs: []batchv1.Job{nodes, data, model}}

	for deps, want := range map[string]bool{
		"t-dataset-initializer-0=Complete":                                true,
		"t-dataset-initializer-0=Complete,t-model-initializer-0=Complete": false,
		"t-node-0=Ready":       false,
		"t-missing-0=Complete": false,
		"t-node-0":             false,
		"":                     false,
		"t-node-0=Running":     false,
	} {
		assert.Equal(t, want, dependenciesMet(j, deps), deps)
	}
	// One more pod ready, one done: every pod of the Job is.
	j.Jobs[0].Status.Succeeded = 1
	assert.True(t, dependenciesMet(j, "t-node-0=Ready"))
}

func jobWith(name string, conditions ...batchv1.JobConditionType) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, c := range conditions {
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return j
}
