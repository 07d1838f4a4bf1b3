package status_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/internal/fixture"
	"github.com/trainfn/trainfn/status/phase"
)

// TestReplicaStatuses: pods are counted by their workload's role, those of
// a workload applied again under the same name, which its controller no
// longer is, left out.
func TestReplicaStatuses(t *testing.T) {
	launcher := fixture.IndexedJob("j-launcher", handoff.RoleLauncher, 1)
	workers := fixture.IndexedJob("j-worker", handoff.RoleWorker, 4, handoff.EndsWith, handoff.EndsWithJob("j-launcher"))
	idle := fixture.IndexedJob("j-evaluator", "evaluator", 1)
	before := fixture.JobPod(&workers, 7, fixture.RunningReady)
	before.OwnerReferences[0].UID = "uid-of-a-deleted-j-worker"
	j := statusOf("MPIJob", fixture.Objects(fixture.Jobs(launcher, workers, idle), nil,
		fixture.JobPods(&launcher, 1, fixture.Initializing),
		fixture.Pods(fixture.JobPod(&workers, 0, fixture.RunningReady), fixture.JobPod(&workers, 1, fixture.RunningNotReady), fixture.JobPod(&workers, 2, fixture.Succeeded),
			fixture.JobPod(&workers, 3, fixture.Failed), fixture.JobPod(&workers, 4, fixture.RunningReady, fixture.Deleting), fixture.JobPod(&workers, 5, fixture.Unschedulable), before)))
	assert.Equal(t, map[string]status.ReplicaStatus{
		handoff.RoleLauncher: {Active: 1},
		handoff.RoleWorker:   {Active: 3, Ready: 1, Succeeded: 1, Failed: 1},
		"evaluator":          {},
	}, j.ReplicaStatuses)
}

func TestStartAndCompletionTime(t *testing.T) {
	master := fixture.IndexedJob("j-master", handoff.RoleMaster, 1)
	workers := fixture.IndexedJob("j-worker", handoff.RoleWorker, 2, handoff.EndsWith, handoff.EndsWithJob("j-master"))

	j := statusOf("PyTorchJob", fixture.Objects(fixture.Jobs(master, workers), nil, fixture.JobPods(&master, 1, fixture.Unschedulable), fixture.JobPods(&workers, 2, fixture.Unschedulable)))
	assert.Nil(t, j.StartTime, "no pod has started")
	assert.Nil(t, j.CompletionTime, "it has not ended")

	j = statusOf("PyTorchJob", fixture.Objects(fixture.Jobs(fixture.With(master, fixture.CompletedAt(fixture.At(40))), workers), nil,
		fixture.JobPods(&master, 1, fixture.Succeeded, fixture.StartedAt(fixture.At(3))),
		fixture.Pods(fixture.JobPod(&workers, 0, fixture.RunningReady, fixture.StartedAt(fixture.At(2))), fixture.JobPod(&workers, 1, fixture.RunningReady, fixture.StartedAt(fixture.At(4))))))
	assert.Equal(t, ptr.To(fixture.At(2)), j.StartTime, "the first pod's start")
	assert.Equal(t, ptr.To(fixture.At(40)), j.CompletionTime, "the master's completion")

	// The Job controller sets completionTime with Complete only; a Job
	// whose success it has seen before its pods are gone ended then.
	met := fixture.With(master, fixture.ConditionAt(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "CompletionsReached", "", fixture.At(39)))
	j = statusOf("PyTorchJob", fixture.Objects(fixture.Jobs(met, workers), nil))
	assert.Equal(t, ptr.To(fixture.At(39)), j.CompletionTime)
}

// TestTrainerStatus: the progress the reconciler recorded on the job's
// first workload is read as Trainer's trainerStatus; a record that does not
// read as one is left out, and the status told all the same.
func TestTrainerStatus(t *testing.T) {
	const report = `{"progressPercentage":45,"estimatedRemainingSeconds":795,"metrics":[{"name":"loss","value":"0.23"}],"lastUpdatedTime":"2026-01-02T03:14:05Z","later":"a field Trainer added"}`
	learner := func(annotations ...string) batchv1.Job {
		return fixture.IndexedJob("j-learner", "learner", 1, append([]string{handoff.FirstRank, "0"}, annotations...)...)
	}
	collector := func(annotations ...string) batchv1.Job {
		return fixture.IndexedJob("j-collector", "collector", 2, append([]string{handoff.FirstRank, "1"}, annotations...)...)
	}
	// The API reads times into the local zone.
	trainerStatusOf := func(objs phase.Objects) status.Job {
		j := statusOf("DIJob", objs)
		if j.TrainerStatus != nil {
			j.TrainerStatus.LastUpdatedTime = metav1.NewTime(j.TrainerStatus.LastUpdatedTime.UTC())
		}
		return j
	}
	want := &status.TrainerStatus{ProgressPercentage: ptr.To[int32](45), EstimatedRemainingSeconds: ptr.To[int32](795),
		Metrics: []status.Metric{{Name: "loss", Value: "0.23"}}, LastUpdatedTime: fixture.At(10)}

	j := trainerStatusOf(fixture.Objects(fixture.Jobs(learner(handoff.TrainerStatus, report)), nil))
	assert.Equal(t, want, j.TrainerStatus)

	j = trainerStatusOf(fixture.Objects(fixture.Jobs(learner(handoff.TrainerStatus, `{"lastUpdatedTime":"2026-01-02T03:04:05Z"}`),
		collector(handoff.TrainerStatus, report)), nil))
	assert.Equal(t, &status.TrainerStatus{LastUpdatedTime: fixture.At(0)}, j.TrainerStatus, "the first rank's record, not the first by name")

	j = trainerStatusOf(fixture.Objects(fixture.Jobs(learner(), collector(handoff.TrainerStatus, report)), nil))
	assert.Equal(t, want, j.TrainerStatus, "else the first that carries one")

	for name, record := range map[string]string{
		"not JSON":                   `progress: 45`,
		"not an object":              `[45]`,
		"null":                       `null`,
		"no lastUpdatedTime":         `{"progressPercentage":45}`,
		"percentage over 100":        `{"progressPercentage":101,"lastUpdatedTime":"2026-01-02T03:04:05Z"}`,
		"negative remaining time":    `{"estimatedRemainingSeconds":-1,"lastUpdatedTime":"2026-01-02T03:04:05Z"}`,
		"percentage past int32":      `{"progressPercentage":4294967296,"lastUpdatedTime":"2026-01-02T03:04:05Z"}`,
		"percentage as a string":     `{"progressPercentage":"45","lastUpdatedTime":"2026-01-02T03:04:05Z"}`,
		"lastUpdatedTime not a time": `{"lastUpdatedTime":"yesterday"}`,
	} {
		j := trainerStatusOf(fixture.Objects(fixture.Jobs(learner(handoff.TrainerStatus, record)), nil))
		assert.Nil(t, j.TrainerStatus, name)
		assert.Equal(t, "DIJob", j.Kind, name)
		assert.NotEmpty(t, j.Phase, name)

		j = trainerStatusOf(fixture.Objects(fixture.Jobs(learner(handoff.TrainerStatus, record), collector(handoff.TrainerStatus, report)), nil))
		assert.Equal(t, want, j.TrainerStatus, "%s: a good record elsewhere still reads", name)
	}
}
