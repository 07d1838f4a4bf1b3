package status

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/status/phase"
)

// lastFailure says why the job's last failure happened, in a word, for the
// REASON column: the reason of its Failed condition once it failed, else
// the latest failure of a container of its pods (an exit not 0, now or
// before its last restart) or of a pod the kubelet failed (Evicted); ""
// when none failed. A job running again after a restart still shows why it
// restarted, which RESTARTS counts.
func lastFailure(conditions []Condition, objs phase.Objects) string {
	for _, c := range conditions {
		if c.Type == ConditionFailed && c.Status == metav1.ConditionTrue {
			return c.Reason
		}
	}
	var last struct {
		at  metav1.Time
		why string
	}
	note := func(at metav1.Time, why string) {
		if last.why == "" || last.at.Before(&at) {
			last.at, last.why = at, why
		}
	}
	pods := ownedPods(objs)
	// The latest of failures at the same time is the last pod's by name,
	// whatever order the pods were listed in.
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	for _, p := range pods {
		if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" {
			note(latestTransition(p), p.Status.Reason)
		}
		for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for _, s := range statuses {
				for _, t := range []*corev1.ContainerStateTerminated{s.LastTerminationState.Terminated, s.State.Terminated} {
					if t != nil && t.ExitCode != 0 {
						note(t.FinishedAt, terminationReason(t))
					}
				}
			}
		}
	}
	return last.why
}

// terminationReason is a container's failure in a word: the kubelet's
// reason (OOMKilled, ContainerCannotRun), or for the reason that says only
// that it exited (Error), the exit status, which tells more.
func terminationReason(t *corev1.ContainerStateTerminated) string {
	if t.Reason == "" || t.Reason == "Error" {
		return fmt.Sprintf("Error(exit %d)", t.ExitCode)
	}
	return t.Reason
}

// latestTransition is when a pod last changed, as far as its conditions
// tell: for a pod the kubelet failed whole, when it did.
func latestTransition(p *corev1.Pod) metav1.Time {
	var last metav1.Time
	for _, c := range p.Status.Conditions {
		if last.Before(&c.LastTransitionTime) {
			last = c.LastTransitionTime
		}
	}
	return last
}
