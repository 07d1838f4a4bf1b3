package phase

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// settling says which Job of the job has not caught up with its pods yet,
// "" when none: a pod of it is done (finished, or every container of it
// ended with no restart to come) and the Job has not counted it, or the
// Job has every completion it asks for and not yet the condition that
// says so. Until the Job controller's next status update, the pods say
// less than the Job will: a launcher or master just done reads as a
// running job's lost pod. The job holds the phase it had meanwhile (rule
// 5 of the package documentation).
func settling(ws []*workload) string {
	for _, w := range ws {
		if w.job == nil {
			continue
		}
		if o, _ := JobOutcome(w.job); o != "" {
			continue
		}
		if c := w.job.Spec.Completions; c != nil && w.job.Status.Succeeded >= *c {
			return fmt.Sprintf("Job %s has its %d completions and not yet its Complete condition", w.name, *c)
		}
		for _, p := range w.owned {
			if done(p) && uncounted(w.job, p) {
				return fmt.Sprintf("pod %s is done and Job %s has not counted it yet", p.Name, w.name)
			}
		}
	}
	return ""
}

// done tells whether a pod has finished, or will without its kubelet
// starting anything again: every container has ended, under restartPolicy
// Never, or OnFailure with status 0 each. The pod's phase follows a
// moment later.
func done(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return true
	}
	policy := p.Spec.RestartPolicy
	if policy != corev1.RestartPolicyNever && policy != corev1.RestartPolicyOnFailure || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, s := range p.Status.ContainerStatuses {
		t := s.State.Terminated
		if t == nil || policy == corev1.RestartPolicyOnFailure && t.ExitCode != 0 {
			return false
		}
	}
	return true
}

// uncounted tells whether the Job has not counted a pod that is done: the
// pod is not finished yet, or still holds the Job's tracking finalizer, or
// the Job lists it among the pods it has yet to count.
func uncounted(j *batchv1.Job, p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		return true
	}
	if slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) {
		return true
	}
	if u := j.Status.UncountedTerminatedPods; u != nil {
		return slices.Contains(u.Succeeded, p.UID) || slices.Contains(u.Failed, p.UID)
	}
	return false
}
