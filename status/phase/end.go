package phase

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
)

// Ending is how a job ended, by rule 2 of the package documentation, and
// when: what a status's Succeeded or Failed condition says.
type Ending struct {
	Phase   Phase
	Reason  string
	Message string
	// Condition is the Job condition that decided the end (rules 2b, 2c
	// and, for the Job that completed last, 2e); nil when the
	// reconciler's record or a container decided it. A Failed one
	// carries the Job controller's reason, BackoffLimitExceeded say.
	Condition *batchv1.JobCondition
	// At is when the job ended, as the objects that decided it keep it;
	// zero when none does.
	At metav1.Time
}

// EndOf is how and when a job ended; ok is false while it has not. Of
// decides the phase by the same rule.
func EndOf(objs Objects) (e Ending, ok bool) {
	ws := workloadsOf(objs)
	if len(ws) == 0 {
		return Ending{}, false
	}
	return end(ws)
}

// end decides whether and how the job ended, by rule 2 of the package
// documentation; ok is false while it has not.
func end(ws []*workload) (e Ending, ok bool) {
	if phase, message, ok := recordedEnd(ws); ok {
		// The reconciler records the end it saw and not when: the
		// latest end any object still shows is the nearest to it.
		return Ending{Phase: phase, Reason: ReasonEnded, Message: message, At: lastEnd(ws)}, true
	}
	if e, ok := endingJob(ws); ok {
		return e, true
	}
	for _, w := range ws {
		if w.job == nil {
			continue
		}
		if o, c := JobOutcome(w.job); o == Failed {
			return Ending{Phase: Failed, Reason: ReasonJobFailed, Message: fmt.Sprintf("Job %s failed%s", w.name, because(c)),
				Condition: c, At: jobEnd(w.job, o, c)}, true
		}
	}
	for _, w := range ws {
		kind, container, ok := handoff.ParseEndsWith(w.obj.GetAnnotations()[handoff.EndsWith])
		if !ok || kind != handoff.EndsWithContainerKind {
			continue
		}
		count := int32(-1)
		if set, ok := w.obj.(*appsv1.StatefulSet); ok {
			count = Replicas(set)
		}
		for _, p := range w.owned {
			if Finished(p, container, count) {
				return Ending{Phase: Succeeded, Reason: ReasonWorkerExited,
					Message: fmt.Sprintf("container %s of pod %s exited with status 0", container, p.Name),
					At:      cleanExit(p, container).FinishedAt}, true
			}
		}
	}
	e = Ending{Phase: Succeeded, Reason: ReasonJobsCompleted, Message: "every Job completed"}
	for _, w := range ws {
		if w.job == nil {
			return Ending{}, false
		}
		o, c := JobOutcome(w.job)
		if o != Succeeded {
			return Ending{}, false
		}
		// The job ended when its last Job did.
		if at := jobEnd(w.job, o, c); e.At.IsZero() || e.At.Before(&at) {
			e.At, e.Condition = at, c
		}
	}
	return e, true
}

// recordedEnd is the end the reconciler recorded on a workload when it
// carried it out: Failed if any workload says so.
func recordedEnd(ws []*workload) (phase Phase, message string, ok bool) {
	for _, want := range []Phase{Failed, Succeeded} {
		for _, w := range ws {
			if Phase(w.obj.GetAnnotations()[handoff.Ended]) == want {
				return want, fmt.Sprintf("%s %s is marked %s=%s", w.kind, w.name, handoff.Ended, want), true
			}
		}
	}
	return "", "", false
}

// endingJob is the outcome of the Job that a workload says ends the job
// (a launcher or a master), once it has one: Failed if any such Job failed.
func endingJob(ws []*workload) (e Ending, ok bool) {
	for _, w := range ws {
		kind, name, named := handoff.ParseEndsWith(w.obj.GetAnnotations()[handoff.EndsWith])
		if !named || kind != handoff.EndsWithJobKind {
			continue
		}
		for _, leader := range ws {
			if leader.job == nil || leader.name != name {
				continue
			}
			switch o, c := JobOutcome(leader.job); o {
			case Failed:
				return Ending{Phase: Failed, Reason: ReasonEndingJobFailed,
					Message:   fmt.Sprintf("Job %s, which ends the job, failed%s", name, because(c)),
					Condition: c, At: jobEnd(leader.job, o, c)}, true
			case Succeeded:
				e, ok = Ending{Phase: Succeeded, Reason: ReasonEndingJobSucceeded,
					Message:   fmt.Sprintf("Job %s, which ends the job, completed", name),
					Condition: c, At: jobEnd(leader.job, o, c)}, true
			}
		}
	}
	return e, ok
}

// jobEnd is when a Job ended as outcome says: its completionTime once the
// Job controller sets it (on Complete only), else when the condition that
// says so became true (Failed, or SuccessCriteriaMet before Complete).
func jobEnd(j *batchv1.Job, outcome Phase, c *batchv1.JobCondition) metav1.Time {
	if outcome == Succeeded && j.Status.CompletionTime != nil {
		return *j.Status.CompletionTime
	}
	if c == nil {
		return metav1.Time{}
	}
	return c.LastTransitionTime
}

// lastEnd is the latest end any of the job's objects shows: a Job's
// outcome, or a container of a pod terminating.
func lastEnd(ws []*workload) metav1.Time {
	var last metav1.Time
	note := func(t metav1.Time) {
		if last.Before(&t) {
			last = t
		}
	}
	for _, w := range ws {
		if w.job != nil {
			if o, c := JobOutcome(w.job); o != "" {
				note(jobEnd(w.job, o, c))
			}
		}
		for _, p := range w.owned {
			for _, s := range p.Status.ContainerStatuses {
				if t := s.State.Terminated; t != nil {
					note(t.FinishedAt)
				}
			}
		}
	}
	return last
}

// JobOutcome reads a Job's terminal conditions, including those the Job
// controller sets before its last pods are gone (FailureTarget,
// SuccessCriteriaMet): Succeeded or Failed, with the condition that says
// so, or "" while the Job runs. The reconciler reads a Job's end through it
// too, so that the phase and the clean-up agree on when a Job ended.
func JobOutcome(j *batchv1.Job) (Phase, *batchv1.JobCondition) {
	for i, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobSuccessCriteriaMet:
			return Succeeded, &j.Status.Conditions[i]
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			return Failed, &j.Status.Conditions[i]
		}
	}
	return "", nil
}

// because is a condition's reason and message, for a message.
func because(c *batchv1.JobCondition) string {
	switch {
	case c == nil || c.Reason == "" && c.Message == "":
		return ""
	case c.Message == "":
		return ": " + c.Reason
	case c.Reason == "":
		return ": " + c.Message
	}
	return fmt.Sprintf(": %s: %s", c.Reason, c.Message)
}

// PodsUp counts a Job's pods that are ready or succeeded, and how many it
// runs at once (its parallelism): a Job with as many is up, as JobSet
// counts a Job ready.
func PodsUp(j *batchv1.Job) (up, want int32) {
	want = 1
	if j.Spec.Parallelism != nil {
		want = *j.Spec.Parallelism
	}
	if j.Status.Ready != nil {
		up = *j.Status.Ready
	}
	return up + j.Status.Succeeded, want
}
