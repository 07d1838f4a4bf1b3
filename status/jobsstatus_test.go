package status

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestJobsStatus(t *testing.T) {
	job := func(rjob string, change func(*batchv1.Job)) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{replicatedJobLabel: rjob}}}
		j.Spec.Parallelism = new(int32(2))
		change(&j)
		return j
	}
	done := func(c batchv1.JobConditionType) func(*batchv1.Job) {
		return func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: c, Status: corev1.ConditionTrue}}
		}
	}
	got := jobsStatus([]batchv1.Job{
		job("node", func(j *batchv1.Job) { j.Status.Active, j.Status.Ready = 2, new(int32(2)) }),
		job("node", func(j *batchv1.Job) { j.Status.Active, j.Status.Ready = 2, new(int32(1)) }),
		job("launcher", func(j *batchv1.Job) { j.Spec.Suspend = new(true) }),
		job("dataset-initializer", done(batchv1.JobComplete)),
		job("model-initializer", done(batchv1.JobFailed)),
	})
	assert.Equal(t, []JobStatus{
		{Name: "dataset-initializer", Succeeded: 1},
		{Name: "launcher", Suspended: 1},
		{Name: "model-initializer", Failed: 1},
		{Name: "node", Ready: 1, Active: 2},
	}, got)
	assert.Nil(t, jobsStatus([]batchv1.Job{{}}), "a job of another kind has none")
}
