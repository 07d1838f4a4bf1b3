package phase_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// want is what a case expects of Of: the phase and reason always, the
// counts and a part of the message when given.
type want struct {
	phase             phase.Phase
	reason            string
	ready, expected   int32
	restarts          int32
	counted           bool // ready, expected and restarts are checked
	messageContaining string
}

func counts(ready, expected, restarts int32) want {
	return want{ready: ready, expected: expected, restarts: restarts, counted: true}
}

func (w want) is(p phase.Phase, reason string) want {
	w.phase, w.reason = p, reason
	return w
}

func (w want) saying(s string) want {
	w.messageContaining = s
	return w
}

func check(t *testing.T, got phase.Summary, w want) {
	t.Helper()
	assert.Equal(t, w.phase, got.Phase, "phase; message %q", got.Message)
	assert.Equal(t, w.reason, got.Reason, "reason; message %q", got.Message)
	if w.counted {
		assert.Equal(t, [3]int32{w.ready, w.expected, w.restarts}, [3]int32{got.Ready, got.Expected, got.Restarts}, "ready, expected, restarts")
	}
	if w.messageContaining != "" {
		assert.Contains(t, got.Message, w.messageContaining)
	}
}

// tracked: the pod still holds its Job's tracking finalizer: the Job has
// not counted it.
func tracked(p *corev1.Pod) { p.Finalizers = append(p.Finalizers, batchv1.JobTrackingFinalizer) }

// exited: every container ended with the status given, under the restart
// policy given, and the kubelet has not set the pod's phase yet.
func exited(code int32, policy corev1.RestartPolicy) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.RestartPolicy = policy
		for i := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}
		}
	}
}

func TestOf(t *testing.T) {
	// A seed-shaped DIJob: one Indexed Job of two workers.
	di := indexedJob("j-worker", handoff.RoleWorker, 2, handoff.DIJobGeneration, "1", handoff.FirstRank, "0")
	// A task-shaped DIJob: a learner and two collectors.
	learner := indexedJob("j-learner", "learner", 1, handoff.DIJobGeneration, "1", handoff.FirstRank, "0")
	collector := indexedJob("j-collector", "collector", 2, handoff.DIJobGeneration, "1", handoff.FirstRank, "1")
	// A preemptible DIJob: a StatefulSet the reconciler scaled to two.
	preemptible := statefulSet("j-worker", handoff.RoleWorker, ptr.To[int32](2),
		handoff.DIJobGeneration, "1", handoff.ElasticWorkers, "1:4", handoff.Workers, "2", handoff.ScaledFrom, "2")
	// An MPIJob: a launcher Job that ends the job, and a worker Job.
	launcher := indexedJob("j-launcher", handoff.RoleLauncher, 1)
	mpiWorkers := indexedJob("j-worker", handoff.RoleWorker, 2, handoff.EndsWith, handoff.EndsWithJob("j-launcher"))
	// An elastic MPIJob's workers, before and after the reconciler set
	// their count (the API server defaulted replicas to 1).
	elasticUnscaled := statefulSet("j-worker", handoff.RoleWorker, ptr.To[int32](1),
		handoff.ElasticWorkers, "1:3", handoff.Workers, "2", handoff.EndsWith, handoff.EndsWithJob("j-launcher"))
	// A PyTorchJob: a master Job that ends the job, a Job per worker.
	master := indexedJob("j-master", handoff.RoleMaster, 1)
	worker0 := indexedJob("j-worker-0", handoff.RoleWorker, 1, handoff.EndsWith, handoff.EndsWithJob("j-master"))
	// An elastic PyTorchJob: agents that end the job by exiting with 0.
	agents := statefulSet("j-worker", handoff.RoleWorker, ptr.To[int32](2),
		handoff.ElasticWorkers, "1:2", handoff.Workers, "2", handoff.ScaledFrom, "2", handoff.EndsWith, handoff.EndsWithContainer("main"))

	for name, tc := range map[string]struct {
		prev phase.Phase
		objs phase.Objects
		want want
	}{
		"no workload, a pod left": {
			objs: objects(nil, nil, jobPods(&di, 1, runningReady)),
			want: counts(0, 0, 0).is(phase.Unknown, phase.ReasonNoWorkloads)},

		// Pending.
		"Job created, no pod yet": {
			objs: objects(jobs(di), nil),
			want: counts(0, 2, 0).is(phase.Pending, phase.ReasonPodsMissing).saying("Job j-worker has 0 of 2 pods")},
		"one of two pods created, running": {
			objs: objects(jobs(di), nil, jobPods(&di, 1, runningReady)),
			want: counts(1, 2, 0).is(phase.Pending, phase.ReasonPodsMissing)},
		"a pod not scheduled": {
			objs: objects(jobs(di), nil, pods(jobPod(&di, 0, runningReady), jobPod(&di, 1, unschedulable))),
			want: counts(1, 2, 0).is(phase.Pending, phase.ReasonUnscheduled).saying("Insufficient nvidia.com/gpu")},
		"a pod not seen by the scheduler yet": {
			objs: objects(jobs(di), nil, pods(jobPod(&di, 0, runningReady), jobPod(&di, 1))),
			want: counts(1, 2, 0).is(phase.Pending, phase.ReasonUnscheduled).saying("pod j-worker-1 is not scheduled")},
		"pods waiting for the allocator": {
			objs: objects(nil, sets(preemptible), setPods(&preemptible, 2, gated)),
			want: counts(0, 2, 0).is(phase.Pending, phase.ReasonSchedulingGated).saying(handoff.AllocationGate)},
		"suspended by a queue": {
			objs: objects(jobs(with(di, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })), nil),
			want: counts(0, 2, 0).is(phase.Pending, phase.ReasonSuspended)},
		"suspended while it ran": {
			prev: phase.Running,
			objs: objects(jobs(with(di, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })), nil, jobPods(&di, 2, runningReady, deleting)),
			want: counts(0, 2, 0).is(phase.Pending, phase.ReasonSuspended)},
		"elastic workers not scaled by the reconciler yet": {
			objs: objects(jobs(launcher), sets(elasticUnscaled), jobPods(&launcher, 1, initializing), setPods(&elasticUnscaled, 1, runningReady)),
			want: counts(1, 3, 0).is(phase.Pending, phase.ReasonWorkersNotSet).saying("1 of 2 pods")},
		"elastic workers under Kueue, an Indexed Job, not scaled yet": {
			// Completions are the bounds' maximum; the API server
			// defaulted parallelism to 1.
			objs: objects(jobs(launcher, with(indexedJob("j-worker", handoff.RoleWorker, 3,
				handoff.ElasticWorkers, "1:3", handoff.Workers, "2", handoff.EndsWith, handoff.EndsWithJob("j-launcher")),
				func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })), nil,
				jobPods(&launcher, 1, initializing)),
			want: counts(0, 3, 0).is(phase.Pending, phase.ReasonWorkersNotSet)},
		"StatefulSet without replicas": {
			objs: objects(nil, sets(statefulSet("j-worker", handoff.RoleWorker, nil))),
			want: counts(0, 0, 0).is(phase.Pending, phase.ReasonWorkersNotSet)},
		"StatefulSet at zero, never ran": {
			objs: objects(nil, sets(statefulSet("j-worker", handoff.RoleWorker, ptr.To[int32](0)))),
			want: counts(0, 0, 0).is(phase.Pending, phase.ReasonNoPodsExpected)},

		// Starting.
		"every pod placed, containers being created": {
			objs: objects(jobs(di), nil, jobPods(&di, 2, creating)),
			want: counts(0, 2, 0).is(phase.Starting, phase.ReasonPodsStarting).saying("pod j-worker-0 is ContainerCreating")},
		"running, not ready yet": {
			objs: objects(jobs(di), nil, pods(jobPod(&di, 0, runningReady), jobPod(&di, 1, runningNotReady))),
			want: counts(1, 2, 0).is(phase.Starting, phase.ReasonPodsStarting).saying("1 of 2 pods ready")},
		"MPIJob: workers ready, launcher waiting for them": {
			objs: objects(jobs(launcher, mpiWorkers), nil, jobPods(&launcher, 1, initializing), jobPods(&mpiWorkers, 2, runningReady)),
			want: counts(2, 3, 0).is(phase.Starting, phase.ReasonPodsStarting).saying("PodInitializing (container main)")},
		"a previous Starting is no restart": {
			prev: phase.Starting,
			objs: objects(jobs(di), nil, jobPods(&di, 2, creating)),
			want: counts(0, 2, 0).is(phase.Starting, phase.ReasonPodsStarting)},

		// Running.
		"seed-shaped DIJob, every worker ready": {
			objs: objects(jobs(di), nil, jobPods(&di, 2, runningReady)),
			want: counts(2, 2, 0).is(phase.Running, phase.ReasonAllReady)},
		"task-shaped DIJob, every task ready": {
			objs: objects(jobs(learner, collector), nil, jobPods(&learner, 1, runningReady), jobPods(&collector, 2, runningReady)),
			want: counts(3, 3, 0).is(phase.Running, phase.ReasonAllReady)},
		"one task done, the others running": {
			objs: objects(jobs(learner, with(collector, condition(batchv1.JobComplete, "CompletionsReached"))), nil,
				jobPods(&learner, 1, runningReady), jobPods(&collector, 2, succeeded)),
			want: counts(1, 1, 0).is(phase.Running, phase.ReasonAllReady)},
		"some indexes succeeded, the rest running": {
			objs: objects(jobs(with(di, func(j *batchv1.Job) { j.Status.Succeeded = 1 })), nil,
				pods(jobPod(&di, 0, succeeded), jobPod(&di, 1, runningReady))),
			want: counts(1, 1, 0).is(phase.Running, phase.ReasonAllReady)},
		"MPIJob: launcher and workers ready": {
			objs: objects(jobs(launcher, mpiWorkers), nil, jobPods(&launcher, 1, runningReady), jobPods(&mpiWorkers, 2, runningReady)),
			want: counts(3, 3, 0).is(phase.Running, phase.ReasonAllReady)},
		"PyTorchJob: master and a worker Job ready": {
			objs: objects(jobs(master, worker0), nil, jobPods(&master, 1, runningReady), jobPods(&worker0, 1, runningReady)),
			want: counts(2, 2, 0).is(phase.Running, phase.ReasonAllReady)},
		"preemptible DIJob, allocated and ready": {
			objs: objects(nil, sets(preemptible), setPods(&preemptible, 2, runningReady)),
			want: counts(2, 2, 0).is(phase.Running, phase.ReasonAllReady)},
		"ready again after restarts, which are counted": {
			prev: phase.Restarting,
			objs: objects(jobs(with(di, func(j *batchv1.Job) { j.Status.Failed = 1 })), nil,
				pods(jobPod(&di, 0, restarted(2), runningReady), jobPod(&di, 1, runningReady), jobPod(&di, 9, failed))),
			want: counts(2, 2, 3).is(phase.Running, phase.ReasonAllReady)},
		"a pod past the count, being scaled down, does not matter": {
			prev: phase.Running,
			objs: objects(nil, sets(preemptible), setPods(&preemptible, 2, runningReady), pods(setPod(&preemptible, 2, runningNotReady))),
			want: counts(2, 2, 0).is(phase.Running, phase.ReasonAllReady)},
		"a recorded end is not taken over the objects": {
			prev: phase.Succeeded,
			objs: objects(jobs(di), nil, jobPods(&di, 2, runningReady)),
			want: counts(2, 2, 0).is(phase.Running, phase.ReasonAllReady)},

		// Restarting.
		"a pod's container restarted, not ready": {
			objs: objects(jobs(di), nil, pods(jobPod(&di, 0, restarted(1), runningNotReady), jobPod(&di, 1, runningReady))),
			want: counts(1, 2, 1).is(phase.Restarting, phase.ReasonPodRestarted).saying("pod j-worker-0 restarted")},
		"a failed pod replaced, its replacement not scheduled": {
			objs: objects(jobs(with(di, func(j *batchv1.Job) { j.Status.Failed = 1 })), nil,
				pods(jobPod(&di, 0, runningReady), jobPod(&di, 1, unschedulable), jobPod(&di, 7, failed))),
			want: counts(1, 2, 1).is(phase.Restarting, phase.ReasonPodReplaced).saying("not scheduled")},
		"it ran, and a pod is being rescheduled": {
			prev: phase.Running,
			objs: objects(jobs(di), nil, pods(jobPod(&di, 0, runningReady), jobPod(&di, 1, runningReady, deleting))),
			want: counts(1, 2, 0).is(phase.Restarting, phase.ReasonWasRunning).saying("Job j-worker has 1 of 2 pods")},
		"preemptible DIJob given a third worker while it ran": {
			prev: phase.Running,
			objs: objects(nil, sets(statefulSet("j-worker", handoff.RoleWorker, ptr.To[int32](3))), setPods(&preemptible, 2, runningReady)),
			want: counts(2, 3, 0).is(phase.Restarting, phase.ReasonWasRunning)},
		"still restarting": {
			prev: phase.Restarting,
			objs: objects(jobs(di), nil, jobPods(&di, 2, creating)),
			want: counts(0, 2, 0).is(phase.Restarting, phase.ReasonWasRunning)},

		// Held while a Job catches up with a pod of it that is done.
		"a launcher just done, its Job yet to count it": {
			prev: phase.Running,
			objs: objects(jobs(launcher, mpiWorkers), nil, pods(jobPod(&launcher, 0, succeeded, tracked)), jobPods(&mpiWorkers, 2, runningReady)),
			want: counts(2, 3, 0).is(phase.Running, phase.ReasonPodsSettling).saying("pod j-launcher-0 is done and Job j-launcher has not counted it yet")},
		"a master's container ended, its pod's phase not yet": {
			prev: phase.Running,
			objs: objects(jobs(master), nil, pods(jobPod(&master, 0, runningNotReady, exited(0, corev1.RestartPolicyNever)))),
			want: counts(0, 1, 0).is(phase.Running, phase.ReasonPodsSettling)},
		"a Job with its completions, not yet Complete": {
			prev: phase.Running,
			objs: objects(jobs(with(master, func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](1); j.Status.Succeeded = 1 })), nil, pods(jobPod(&master, 0, succeeded))),
			want: counts(0, 0, 0).is(phase.Running, phase.ReasonPodsSettling).saying("has its 1 completions")},
		"restarting holds too": {
			prev: phase.Restarting,
			objs: objects(jobs(master), nil, pods(jobPod(&master, 0, failed, tracked))),
			want: counts(0, 1, 0).is(phase.Restarting, phase.ReasonPodsSettling)},
		"nothing to hold before the job ran": {
			objs: objects(jobs(launcher, mpiWorkers), nil, pods(jobPod(&launcher, 0, succeeded, tracked)), jobPods(&mpiWorkers, 2, runningReady)),
			want: counts(2, 3, 0).is(phase.Pending, phase.ReasonPodsMissing)},
		"a container the kubelet restarts is no end": {
			prev: phase.Running,
			objs: objects(jobs(master), nil, pods(jobPod(&master, 0, runningNotReady, exited(1, corev1.RestartPolicyOnFailure)))),
			want: counts(0, 1, 0).is(phase.Restarting, phase.ReasonWasRunning)},
		"a finished pod counted is no longer settling": {
			prev: phase.Running,
			objs: objects(jobs(with(di, func(j *batchv1.Job) { j.Status.Failed = 1 })), nil, pods(jobPod(&di, 0, runningReady), jobPod(&di, 1, failed))),
			want: counts(1, 2, 1).is(phase.Restarting, phase.ReasonPodReplaced)},

		// Succeeded.
		"every Job complete": {
			objs: objects(jobs(with(learner, condition(batchv1.JobComplete, "")), with(collector, condition(batchv1.JobComplete, ""))), nil,
				jobPods(&learner, 1, succeeded), jobPods(&collector, 2, succeeded)),
			want: counts(0, 0, 0).is(phase.Succeeded, phase.ReasonJobsCompleted)},
		"success criteria met, pods not gone yet": {
			objs: objects(jobs(with(di, condition(batchv1.JobSuccessCriteriaMet, "CompletionsReached"))), nil, jobPods(&di, 2, runningReady)),
			want: counts(0, 0, 0).is(phase.Succeeded, phase.ReasonJobsCompleted)},
		"launcher complete, workers still running": {
			objs: objects(jobs(with(launcher, condition(batchv1.JobComplete, "")), mpiWorkers), nil,
				jobPods(&launcher, 1, succeeded), jobPods(&mpiWorkers, 2, runningReady)),
			want: counts(0, 0, 0).is(phase.Succeeded, phase.ReasonEndingJobSucceeded).saying("Job j-launcher, which ends the job, completed")},
		"master complete, then a worker Job failed": {
			objs: objects(jobs(with(master, condition(batchv1.JobComplete, "")), with(worker0, condition(batchv1.JobFailed, "BackoffLimitExceeded"))), nil),
			want: counts(0, 0, 0).is(phase.Succeeded, phase.ReasonEndingJobSucceeded)},
		"recorded by the reconciler on StatefulSet workers": {
			objs: objects(nil, sets(statefulSet("j-worker", handoff.RoleWorker, ptr.To[int32](0), handoff.Ended, "Succeeded"))),
			want: counts(0, 0, 0).is(phase.Succeeded, phase.ReasonEnded)},
		"elastic PyTorch agents exited with 0": {
			objs: objects(nil, sets(agents), pods(setPod(&agents, 0, exitedAndRestarted), setPod(&agents, 1, runningReady))),
			want: counts(0, 0, 1).is(phase.Succeeded, phase.ReasonWorkerExited).saying("pod j-worker-0")},

		// Failed.
		"a task's Job failed": {
			objs: objects(jobs(learner, with(collector, condition(batchv1.JobFailed, "BackoffLimitExceeded"))), nil,
				jobPods(&learner, 1, runningReady), jobPods(&collector, 2, failed)),
			want: counts(0, 0, 0).is(phase.Failed, phase.ReasonJobFailed).saying("Job j-collector failed: BackoffLimitExceeded")},
		"failure target, pods not gone yet": {
			objs: objects(jobs(with(di, condition(batchv1.JobFailureTarget, "BackoffLimitExceeded"))), nil, jobPods(&di, 2, runningReady)),
			want: counts(0, 0, 0).is(phase.Failed, phase.ReasonJobFailed)},
		"workers' Job failed, launcher running": {
			objs: objects(jobs(launcher, with(mpiWorkers, condition(batchv1.JobFailed, ""))), nil, jobPods(&launcher, 1, runningReady)),
			want: counts(0, 0, 0).is(phase.Failed, phase.ReasonJobFailed)},
		"launcher failed": {
			objs: objects(jobs(with(launcher, condition(batchv1.JobFailed, "BackoffLimitExceeded")), mpiWorkers), nil, jobPods(&mpiWorkers, 2, runningReady)),
			want: counts(0, 0, 0).is(phase.Failed, phase.ReasonEndingJobFailed)},
		"recorded failure beats a launcher's completion": {
			objs: objects(jobs(with(launcher, condition(batchv1.JobComplete, "")),
				with(mpiWorkers, func(j *batchv1.Job) { j.Annotations[handoff.Ended] = "Failed" })), nil),
			want: counts(0, 0, 0).is(phase.Failed, phase.ReasonEnded)},
	} {
		t.Run(name, func(t *testing.T) {
			check(t, phase.Of(tc.prev, tc.objs), tc.want)
		})
	}
}

// TestOwnership: a workload counts only the pods it controls, and not
// those of another of the same name it replaced.
func TestOwnership(t *testing.T) {
	di := indexedJob("j-worker", handoff.RoleWorker, 2)
	before := di
	before.UID = "uid-before"
	other := indexedJob("j-other", handoff.RoleWorker, 2)
	orphan := jobPod(&di, 1, runningReady)
	orphan.OwnerReferences = nil
	wrongGroup := jobPod(&di, 1, runningReady)
	wrongGroup.OwnerReferences[0].APIVersion = "example.com/v1"
	got := phase.Of("", objects(jobs(di), nil,
		pods(jobPod(&di, 0, runningReady), jobPod(&before, 1, runningReady), jobPod(&other, 1, runningReady), orphan, wrongGroup)))
	check(t, got, counts(1, 2, 0).is(phase.Pending, phase.ReasonPodsMissing))
	assert.Equal(t, []phase.Workload{{Kind: "Job", Name: "j-worker", Role: handoff.RoleWorker, Expected: 2, Pods: 1, Ready: 1}}, got.Workloads)
}

// TestLifecycle walks jobs through their phases, each step's phase the
// next one's previous, as the reconciler records them.
func TestLifecycle(t *testing.T) {
	type step struct {
		objs phase.Objects
		want phase.Phase
	}
	di := indexedJob("j-worker", handoff.RoleWorker, 2, handoff.DIJobGeneration, "1", handoff.FirstRank, "0")
	replaced := with(di, func(j *batchv1.Job) { j.Status.Failed = 1 })
	sts := func(n int32, annotations ...string) phase.Objects {
		s := statefulSet("j-worker", handoff.RoleWorker, ptr.To(n), annotations...)
		return objects(nil, sets(s))
	}
	withPods := func(o phase.Objects, ps ...corev1.Pod) phase.Objects {
		o.Pods = ps
		return o
	}
	preemptible := statefulSet("j-worker", handoff.RoleWorker, nil)
	for name, steps := range map[string][]step{
		"an Indexed Job's workers": {
			{objects(jobs(di), nil), phase.Pending},
			{objects(jobs(di), nil, pods(jobPod(&di, 0), jobPod(&di, 1))), phase.Pending},
			{objects(jobs(di), nil, jobPods(&di, 2, creating)), phase.Starting},
			{objects(jobs(di), nil, jobPods(&di, 2, runningReady)), phase.Running},
			{objects(jobs(di), nil, pods(jobPod(&di, 0, restarted(1), runningNotReady), jobPod(&di, 1, runningReady))), phase.Restarting},
			{objects(jobs(di), nil, pods(jobPod(&di, 0, restarted(1), runningReady), jobPod(&di, 1, runningReady))), phase.Running},
			{objects(jobs(replaced), nil, pods(jobPod(&di, 0, restarted(1), runningReady), jobPod(&di, 1, failed))), phase.Restarting},
			{objects(jobs(replaced), nil, pods(jobPod(&di, 0, restarted(1), runningReady), jobPod(&di, 2, creating))), phase.Restarting},
			{objects(jobs(replaced), nil, pods(jobPod(&di, 0, restarted(1), runningReady), jobPod(&di, 2, runningReady))), phase.Running},
			{objects(jobs(with(replaced, condition(batchv1.JobComplete, ""))), nil, jobPods(&di, 2, succeeded)), phase.Succeeded},
		},
		"a node lost while running, then the job failed": {
			{objects(jobs(di), nil, jobPods(&di, 2, runningReady)), phase.Running},
			{objects(jobs(di), nil, pods(jobPod(&di, 0, runningReady))), phase.Restarting},
			{objects(jobs(di), nil, pods(jobPod(&di, 0, runningReady), jobPod(&di, 1, unschedulable))), phase.Restarting},
			{objects(jobs(with(di, condition(batchv1.JobFailed, "DeadlineExceeded"))), nil), phase.Failed},
		},
		"a preemptible DIJob's StatefulSet": {
			{objects(nil, sets(preemptible)), phase.Pending},
			{withPods(sts(2), setPods(&preemptible, 2, gated)...), phase.Pending},
			{withPods(sts(2), setPods(&preemptible, 2, creating)...), phase.Starting},
			{withPods(sts(2), setPods(&preemptible, 2, runningReady)...), phase.Running},
			{withPods(sts(3), append(setPods(&preemptible, 2, runningReady), setPod(&preemptible, 2, gated))...), phase.Restarting},
			{withPods(sts(3), setPods(&preemptible, 3, runningReady)...), phase.Running},
			{withPods(sts(1), append(setPods(&preemptible, 1, runningReady), setPod(&preemptible, 1, runningReady, deleting))...), phase.Running},
			{sts(0, handoff.Ended, "Succeeded"), phase.Succeeded},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var prev phase.Phase
			for i, s := range steps {
				got := phase.Of(prev, s.objs)
				if !assert.Equal(t, s.want, got.Phase, "step %d, after %s: %s %s", i, prev, got.Reason, got.Message) {
					return
				}
				prev = got.Phase
			}
		})
	}
}

func TestRecorded(t *testing.T) {
	rank0 := indexedJob("j-learner", "learner", 1, handoff.FirstRank, "0", handoff.Phase, "Running")
	rank1 := indexedJob("j-collector", "collector", 1, handoff.FirstRank, "1", handoff.Phase, "Restarting")
	bogus := indexedJob("j-a", "a", 1, handoff.Phase, "Sleeping")
	for name, tc := range map[string]struct {
		objs phase.Objects
		want phase.Phase
	}{
		"none":                           {objects(jobs(indexedJob("j-worker", handoff.RoleWorker, 1)), nil), ""},
		"first rank 0's, before others":  {objects(jobs(rank1, rank0), nil), phase.Running},
		"another's when rank 0 has none": {objects(jobs(rank1), nil), phase.Restarting},
		"no phase is ignored":            {objects(jobs(bogus, rank1), nil), phase.Restarting},
		"on a StatefulSet": {objects(nil, sets(statefulSet("j-worker", handoff.RoleWorker, nil, handoff.Phase, "Pending"))),
			phase.Pending},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, phase.Recorded(tc.objs))
		})
	}
}

func TestParseAndEnded(t *testing.T) {
	for _, p := range []phase.Phase{phase.Pending, phase.Starting, phase.Running, phase.Restarting, phase.Succeeded, phase.Failed, phase.Unknown} {
		got, ok := phase.Parse(string(p))
		assert.True(t, ok, p)
		assert.Equal(t, p, got)
		assert.Equal(t, p == phase.Succeeded || p == phase.Failed, p.Ended(), p)
	}
	_, ok := phase.Parse("running")
	assert.False(t, ok, "phases are case-sensitive, as recorded")
}
