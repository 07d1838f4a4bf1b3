package phase

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/render/handoff"
)

// end decides whether and how the job ended, by rule 2 of the package
// documentation; ok is false while it has not.
func end(ws []*workload) (phase Phase, reason, message string, ok bool) {
	if phase, message, ok := recordedEnd(ws); ok {
		return phase, ReasonEnded, message, true
	}
	if phase, message, ok := endingJob(ws); ok {
		return phase, map[Phase]string{Succeeded: ReasonEndingJobSucceeded, Failed: ReasonEndingJobFailed}[phase], message, true
	}
	for _, w := range ws {
		if w.job == nil {
			continue
		}
		if o, c := JobOutcome(w.job); o == Failed {
			return Failed, ReasonJobFailed, fmt.Sprintf("Job %s failed%s", w.name, because(c)), true
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
				return Succeeded, ReasonWorkerExited, fmt.Sprintf("container %s of pod %s exited with status 0", container, p.Name), true
			}
		}
	}
	for _, w := range ws {
		if w.job == nil {
			return "", "", "", false
		}
		if o, _ := JobOutcome(w.job); o != Succeeded {
			return "", "", "", false
		}
	}
	return Succeeded, ReasonJobsCompleted, "every Job completed", true
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
func endingJob(ws []*workload) (phase Phase, message string, ok bool) {
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
				return Failed, fmt.Sprintf("Job %s, which ends the job, failed%s", name, because(c)), true
			case Succeeded:
				phase, message, ok = Succeeded, fmt.Sprintf("Job %s, which ends the job, completed", name), true
			}
		}
	}
	return phase, message, ok
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
