package status_test

import (
	"fmt"
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

// conditionCase is a job's objects, and what its status should say: its
// conditions, each as "Type=Status Reason +Nm", the time in minutes after
// T0 ("-" when left out), and its REASON.
type conditionCase struct {
	objs       phase.Objects
	conditions []string
	reason     string
}

func statusOf(kind string, objs phase.Objects) status.Job {
	return status.JobOf("ns", "j", fixture.OfKind(kind, objs))
}

func brief(cs []status.Condition) []string {
	out := []string{}
	for _, c := range cs {
		at := "-"
		if !c.LastTransitionTime.IsZero() {
			at = fmt.Sprintf("+%dm", int(c.LastTransitionTime.Sub(fixture.T0).Minutes()))
		}
		out = append(out, fmt.Sprintf("%s=%s %s %s", c.Type, c.Status, c.Reason, at))
	}
	return out
}

func checkConditions(t *testing.T, kind string, cases map[string]conditionCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := statusOf(kind, tc.objs)
			assert.Equal(t, tc.conditions, brief(j.Conditions), "phase %s: %s", j.Phase, j.Message)
			assert.Equal(t, tc.reason, status.LastFailure(j), "REASON")
		})
	}
}

// Pod states with times, for the conditions' times.
var (
	ready = func(m int) []fixture.PodState {
		return []fixture.PodState{fixture.RunningReady, fixture.ReadySince(fixture.At(m))}
	}
	// oomKilled: the kubelet restarted its container after it ran out
	// of memory at m, and it runs again, not ready yet.
	oomKilled = func(m int) []fixture.PodState {
		return []fixture.PodState{fixture.RestartedAfter(137, "OOMKilled", fixture.At(m)), fixture.RunningNotReady, fixture.ReadySince(fixture.At(m))}
	}
)

// suspended: spec.suspend, which the Job controller answered at m.
func suspended(m int) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		fixture.Suspend(true)(j)
		fixture.ConditionAt(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", fixture.At(m))(j)
	}
}

// resumed: suspended, then resumed at m.
func resumed(m int) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		fixture.Suspend(false)(j)
		fixture.ConditionAt(batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", fixture.At(m))(j)
	}
}

// failedAt: the Job controller failed the Job at m, as it says why.
func failedAt(m int, reason, message string) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		fixture.ConditionAt(batchv1.JobFailureTarget, corev1.ConditionTrue, reason, message, fixture.At(m))(j)
		fixture.ConditionAt(batchv1.JobFailed, corev1.ConditionTrue, reason, message, fixture.At(m))(j)
	}
}

func TestConditionsMPIJob(t *testing.T) {
	launcher := fixture.IndexedJob("j-launcher", handoff.RoleLauncher, 1)
	workers := fixture.IndexedJob("j-worker", handoff.RoleWorker, 2, handoff.EndsWith, handoff.EndsWithJob("j-launcher"))
	checkConditions(t, "MPIJob", map[string]conditionCase{
		"created, pods not scheduled": {
			objs:       fixture.Objects(fixture.Jobs(launcher, workers), nil, fixture.JobPods(&launcher, 1, fixture.Unschedulable), fixture.JobPods(&workers, 2, fixture.Unschedulable)),
			conditions: []string{"Created=True MPIJobCreated +0m"}},
		"launcher waiting for its workers": {
			objs:       fixture.Objects(fixture.Jobs(launcher, workers), nil, fixture.JobPods(&launcher, 1, fixture.Initializing), fixture.JobPods(&workers, 2, ready(3)...)),
			conditions: []string{"Created=True MPIJobCreated +0m"}},
		"suspended": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(launcher, suspended(1)), fixture.With(workers, suspended(2))), nil),
			conditions: []string{"Created=True MPIJobCreated +0m",
				"Suspended=True MPIJobSuspended +1m", "Running=False MPIJobSuspended +1m"}},
		"suspended from its creation, before the Job controller saw it": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(launcher, fixture.Suspend(true), fixture.CreatedAt(fixture.At(2))), fixture.With(workers, fixture.Suspend(true))), nil),
			conditions: []string{"Created=True MPIJobCreated +0m",
				"Suspended=True MPIJobSuspended +2m", "Running=False MPIJobSuspended +2m"}},
		"resumed, running": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(launcher, resumed(5)), fixture.With(workers, resumed(5))), nil,
				fixture.Pods(fixture.JobPod(&launcher, 0, ready(8)...)), fixture.JobPods(&workers, 2, ready(7)...)),
			conditions: []string{"Created=True MPIJobCreated +0m",
				"Suspended=False MPIJobResumed +5m", "Running=True MPIJobRunning +8m"}},
		"running": {
			objs: fixture.Objects(fixture.Jobs(launcher, workers), nil,
				fixture.JobPods(&launcher, 1, ready(6)...), fixture.Pods(fixture.JobPod(&workers, 0, ready(3)...), fixture.JobPod(&workers, 1, ready(4)...))),
			conditions: []string{"Created=True MPIJobCreated +0m", "Running=True MPIJobRunning +6m"}},
		"a worker out of memory, restarted": {
			objs: fixture.Objects(fixture.Jobs(launcher, workers), nil,
				fixture.JobPods(&launcher, 1, ready(6)...), fixture.Pods(fixture.JobPod(&workers, 0, ready(3)...), fixture.JobPod(&workers, 1, oomKilled(20)...))),
			conditions: []string{"Created=True MPIJobCreated +0m",
				"Running=False MPIJobRestarting +20m", "Restarting=True MPIJobRestarting +20m"},
			reason: "OOMKilled"},
		"a worker OOMKilled once, running again": {
			objs: fixture.Objects(fixture.Jobs(launcher, workers), nil,
				fixture.JobPods(&launcher, 1, ready(6)...), fixture.Pods(fixture.JobPod(&workers, 0, ready(3)...),
					fixture.JobPod(&workers, 1, fixture.RestartedAfter(137, "OOMKilled", fixture.At(20)), fixture.RunningReady, fixture.ReadySince(fixture.At(21))))),
			conditions: []string{"Created=True MPIJobCreated +0m", "Running=True MPIJobRunning +21m"},
			reason:     "OOMKilled"},
		"the launcher completed": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(launcher, fixture.CompletedAt(fixture.At(30))), workers), nil,
				fixture.JobPods(&launcher, 1, fixture.Succeeded, fixture.FinishedAt(fixture.At(30), 0, "")), fixture.JobPods(&workers, 2, ready(3)...)),
			conditions: []string{"Created=True MPIJobCreated +0m",
				"Running=False MPIJobSucceeded +30m", "Succeeded=True MPIJobSucceeded +30m"}},
		"the launcher failed": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(launcher, failedAt(25, "BackoffLimitExceeded", "Job has reached the specified backoff limit")), workers), nil,
				fixture.JobPods(&launcher, 1, fixture.Failed, fixture.FinishedAt(fixture.At(24), 0, "")), fixture.JobPods(&workers, 2, ready(3)...)),
			conditions: []string{"Created=True MPIJobCreated +0m",
				"Running=False MPIJobFailed +25m", "Failed=True BackoffLimitExceeded +25m"},
			reason: "BackoffLimitExceeded"},
		"resumed, then failed": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(launcher, resumed(5), failedAt(25, "DeadlineExceeded", "Job was active longer than specified deadline")),
				fixture.With(workers, resumed(5))), nil),
			conditions: []string{"Created=True MPIJobCreated +0m", "Suspended=False MPIJobResumed +5m",
				"Running=False MPIJobFailed +25m", "Failed=True DeadlineExceeded +25m"},
			reason: "DeadlineExceeded"},
	})
}

func TestConditionsPyTorchJob(t *testing.T) {
	master := fixture.IndexedJob("j-master", handoff.RoleMaster, 1)
	workers := fixture.IndexedJob("j-worker", handoff.RoleWorker, 2, handoff.EndsWith, handoff.EndsWithJob("j-master"))
	// The Job replaced worker 1, which failed, by a pod created at 15.
	replaced := fixture.With(workers, func(j *batchv1.Job) { j.Status.Failed = 1 })
	checkConditions(t, "PyTorchJob", map[string]conditionCase{
		"pods starting": {
			objs:       fixture.Objects(fixture.Jobs(master, workers), nil, fixture.JobPods(&master, 1, fixture.Creating), fixture.JobPods(&workers, 2, fixture.Creating)),
			conditions: []string{"Created=True PyTorchJobCreated +0m"}},
		"suspended": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(master, suspended(1)), fixture.With(workers, suspended(1))), nil),
			conditions: []string{"Created=True PyTorchJobCreated +0m",
				"Suspended=True PyTorchJobSuspended +1m", "Running=False PyTorchJobSuspended +1m"}},
		"resumed, pods starting": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(master, resumed(4)), fixture.With(workers, resumed(4))), nil,
				fixture.JobPods(&master, 1, fixture.Creating), fixture.JobPods(&workers, 2, fixture.Creating)),
			conditions: []string{"Created=True PyTorchJobCreated +0m", "Suspended=False PyTorchJobResumed +4m"}},
		"running": {
			objs:       fixture.Objects(fixture.Jobs(master, workers), nil, fixture.JobPods(&master, 1, ready(2)...), fixture.JobPods(&workers, 2, ready(5)...)),
			conditions: []string{"Created=True PyTorchJobCreated +0m", "Running=True PyTorchJobRunning +5m"}},
		"a failed worker replaced": {
			objs: fixture.Objects(fixture.Jobs(master, replaced), nil, fixture.JobPods(&master, 1, ready(2)...),
				fixture.Pods(fixture.JobPod(&replaced, 0, ready(5)...), fixture.JobPod(&replaced, 1, fixture.Creating, fixture.CreatedAfter(fixture.At(15))),
					fixture.JobPod(&replaced, 9, fixture.Failed, fixture.FinishedAt(fixture.At(14), 1, "Error")))),
			conditions: []string{"Created=True PyTorchJobCreated +0m",
				"Running=False PyTorchJobRestarting +15m", "Restarting=True PyTorchJobRestarting +15m"},
			reason: "Error(exit 1)"},
		"the master completed": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(master, fixture.CompletedAt(fixture.At(40))), fixture.With(workers, fixture.CompletedAt(fixture.At(41)))), nil,
				fixture.JobPods(&master, 1, fixture.Succeeded, fixture.FinishedAt(fixture.At(40), 0, ""))),
			conditions: []string{"Created=True PyTorchJobCreated +0m",
				"Running=False PyTorchJobSucceeded +40m", "Succeeded=True PyTorchJobSucceeded +40m"}},
		"the master failed": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(master, failedAt(33, "BackoffLimitExceeded", "Job has reached the specified backoff limit")), workers), nil,
				fixture.JobPods(&master, 1, fixture.Failed, fixture.FinishedAt(fixture.At(32), 2, "Error"))),
			conditions: []string{"Created=True PyTorchJobCreated +0m",
				"Running=False PyTorchJobFailed +33m", "Failed=True BackoffLimitExceeded +33m"},
			reason: "BackoffLimitExceeded"},
	})
}

func TestConditionsElasticPyTorchJob(t *testing.T) {
	agents := fixture.StatefulSet("j-worker", handoff.RoleWorker, ptr.To[int32](2),
		handoff.ElasticWorkers, "1:2", handoff.Workers, "2", handoff.ScaledFrom, "2", handoff.EndsWith, handoff.EndsWithContainer("main"))
	checkConditions(t, "PyTorchJob", map[string]conditionCase{
		"agents not scheduled": {
			objs:       fixture.Objects(nil, fixture.Sets(agents), fixture.SetPods(&agents, 2, fixture.Unschedulable)),
			conditions: []string{"Created=True PyTorchJobCreated +0m"}},
		"running": {
			objs:       fixture.Objects(nil, fixture.Sets(agents), fixture.Pods(fixture.SetPod(&agents, 0, ready(3)...), fixture.SetPod(&agents, 1, ready(9)...))),
			conditions: []string{"Created=True PyTorchJobCreated +0m", "Running=True PyTorchJobRunning +9m"}},
		"an agent exited with 1, restarted": {
			objs: fixture.Objects(nil, fixture.Sets(agents), fixture.Pods(fixture.SetPod(&agents, 0, ready(3)...),
				fixture.SetPod(&agents, 1, fixture.RestartedAfter(1, "Error", fixture.At(12)), fixture.RunningNotReady, fixture.ReadySince(fixture.At(12))))),
			conditions: []string{"Created=True PyTorchJobCreated +0m",
				"Running=False PyTorchJobRestarting +12m", "Restarting=True PyTorchJobRestarting +12m"},
			reason: "Error(exit 1)"},
		"an agent ended training": {
			objs: fixture.Objects(nil, fixture.Sets(agents), fixture.Pods(fixture.SetPod(&agents, 0, ready(3)...),
				fixture.SetPod(&agents, 1, fixture.RestartedAfter(0, "Completed", fixture.At(44)), fixture.RunningReady))),
			conditions: []string{"Created=True PyTorchJobCreated +0m",
				"Running=False PyTorchJobSucceeded +44m", "Succeeded=True PyTorchJobSucceeded +44m"}},
		"the reconciler recorded the failure, the pods are gone": {
			objs: fixture.Objects(nil, fixture.Sets(fixture.StatefulSet("j-worker", handoff.RoleWorker, ptr.To[int32](0), handoff.Ended, string(phase.Failed)))),
			conditions: []string{"Created=True PyTorchJobCreated +0m",
				"Running=False PyTorchJobFailed -", "Failed=True PyTorchJobFailed -"},
			reason: "PyTorchJobFailed"},
	})
}

func TestConditionsDIJob(t *testing.T) {
	learner := fixture.IndexedJob("j-learner", "learner", 1, handoff.DIJobGeneration, "1", handoff.FirstRank, "0")
	collector := fixture.IndexedJob("j-collector", "collector", 2, handoff.DIJobGeneration, "1", handoff.FirstRank, "1")
	wasRunning := fixture.With(learner, func(j *batchv1.Job) { j.Annotations[handoff.Phase] = string(phase.Running) })
	checkConditions(t, "DIJob", map[string]conditionCase{
		"pods waiting for the allocator": {
			objs:       fixture.Objects(fixture.Jobs(learner, collector), nil, fixture.JobPods(&learner, 1, fixture.Gated), fixture.JobPods(&collector, 2, fixture.Gated)),
			conditions: []string{"Created=True DIJobCreated +0m"}},
		"suspended": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(learner, suspended(3)), fixture.With(collector, suspended(3))), nil),
			conditions: []string{"Created=True DIJobCreated +0m",
				"Suspended=True DIJobSuspended +3m", "Running=False DIJobSuspended +3m"}},
		"running": {
			objs:       fixture.Objects(fixture.Jobs(learner, collector), nil, fixture.JobPods(&learner, 1, ready(4)...), fixture.JobPods(&collector, 2, ready(2)...)),
			conditions: []string{"Created=True DIJobCreated +0m", "Running=True DIJobRunning +4m"}},
		"had been running, a collector lost readiness": {
			objs: fixture.Objects(fixture.Jobs(wasRunning, collector), nil, fixture.JobPods(&wasRunning, 1, ready(4)...),
				fixture.Pods(fixture.JobPod(&collector, 0, ready(2)...), fixture.JobPod(&collector, 1, fixture.RunningNotReady, fixture.ReadySince(fixture.At(17))))),
			conditions: []string{"Created=True DIJobCreated +0m",
				"Running=False DIJobRestarting +17m", "Restarting=True DIJobRestarting +17m"}},
		"every Job completed": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(learner, fixture.CompletedAt(fixture.At(52))), fixture.With(collector, fixture.CompletedAt(fixture.At(50)))), nil),
			conditions: []string{"Created=True DIJobCreated +0m",
				"Running=False DIJobSucceeded +52m", "Succeeded=True DIJobSucceeded +52m"}},
		"a collector failed": {
			objs: fixture.Objects(fixture.Jobs(learner, fixture.With(collector, failedAt(26, "PodFailurePolicy", "Container main for pod ns/j-collector-1 failed with exit code 3"))), nil,
				fixture.JobPods(&learner, 1, ready(4)...)),
			conditions: []string{"Created=True DIJobCreated +0m",
				"Running=False DIJobFailed +26m", "Failed=True PodFailurePolicy +26m"},
			reason: "PodFailurePolicy"},
	})
}

func TestConditionsTrainJob(t *testing.T) {
	node := fixture.IndexedJob("j-node-0", "node", 2)
	node.Labels["jobset.sigs.k8s.io/replicatedjob-name"] = "node"
	checkConditions(t, "TrainJob", map[string]conditionCase{
		"pods starting": {
			objs:       fixture.Objects(fixture.Jobs(node), nil, fixture.JobPods(&node, 2, fixture.Creating)),
			conditions: []string{"Created=True TrainJobCreated +0m"}},
		"suspended": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(node, suspended(0))), nil),
			conditions: []string{"Created=True TrainJobCreated +0m",
				"Suspended=True TrainJobSuspended +0m", "Running=False TrainJobSuspended +0m"}},
		"resumed, running": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(node, resumed(10))), nil, fixture.JobPods(&node, 2, ready(11)...)),
			conditions: []string{"Created=True TrainJobCreated +0m",
				"Suspended=False TrainJobResumed +10m", "Running=True TrainJobRunning +11m"}},
		"a node restarted": {
			objs: fixture.Objects(fixture.Jobs(node), nil, fixture.Pods(fixture.JobPod(&node, 0, ready(11)...), fixture.JobPod(&node, 1, oomKilled(13)...))),
			conditions: []string{"Created=True TrainJobCreated +0m",
				"Running=False TrainJobRestarting +13m", "Restarting=True TrainJobRestarting +13m"},
			reason: "OOMKilled"},
		"complete": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(node, fixture.CompletedAt(fixture.At(60)))), nil),
			conditions: []string{"Created=True TrainJobCreated +0m", "Running=False TrainJobSucceeded +60m",
				"Succeeded=True TrainJobSucceeded +60m", "Complete=True TrainJobSucceeded +60m"}},
		"failed": {
			objs: fixture.Objects(fixture.Jobs(fixture.With(node, failedAt(61, "BackoffLimitExceeded", "Job has reached the specified backoff limit"))), nil),
			conditions: []string{"Created=True TrainJobCreated +0m",
				"Running=False TrainJobFailed +61m", "Failed=True BackoffLimitExceeded +61m"},
			reason: "BackoffLimitExceeded"},
	})
}

// TestFailedConditionMessage: a Failed condition says what the Job
// controller said, and without a failing Job, what the phase says.
func TestFailedConditionMessage(t *testing.T) {
	launcher := fixture.IndexedJob("j-launcher", handoff.RoleLauncher, 1)
	j := statusOf("MPIJob", fixture.Objects(fixture.Jobs(fixture.With(launcher, failedAt(25, "BackoffLimitExceeded", "Job has reached the specified backoff limit"))), nil))
	failed := j.Conditions[len(j.Conditions)-1]
	assert.Equal(t, status.Condition{Type: status.ConditionFailed, Status: metav1.ConditionTrue, Reason: "BackoffLimitExceeded",
		Message: "Job has reached the specified backoff limit", LastTransitionTime: fixture.At(25)}, failed)
	assert.Equal(t, ptr.To(fixture.At(25)), j.CompletionTime)

	j = statusOf("MPIJob", fixture.Objects(fixture.Jobs(fixture.With(launcher, failedAt(25, "", ""))), nil))
	failed = j.Conditions[len(j.Conditions)-1]
	assert.Equal(t, "MPIJobFailed", failed.Reason)
	assert.Equal(t, "Job j-launcher failed", failed.Message)
}
