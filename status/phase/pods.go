package phase

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// live tells whether a pod still counts towards its workload: neither
// finished nor being deleted. A pod being deleted is on its way out, and
// its workload makes another in its place.
func live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// Ready tells whether a pod runs and its Ready condition is true, and since
// when that condition has held, to the second the API keeps. The phase and
// host discovery both read readiness here, so that a pod the phase counts
// ready is one discovery gives work to.
func Ready(p *corev1.Pod) (ready bool, since time.Time) {
	if p.Status.Phase != corev1.PodRunning {
		return false, time.Time{}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status != corev1.ConditionTrue {
				return false, time.Time{}
			}
			return true, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}

// restartsOf sums the restarts of a pod's containers, init containers
// included: a kubelet restarting any of them restarted the worker.
func restartsOf(p *corev1.Pod) int32 {
	var n int32
	for _, s := range p.Status.InitContainerStatuses {
		n += s.RestartCount
	}
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

// gates names a pod's scheduling gates; empty when it has none.
func gates(p *corev1.Pod) string {
	var names []string
	for _, g := range p.Spec.SchedulingGates {
		names = append(names, g.Name)
	}
	return strings.Join(names, ", ")
}

// unscheduled says why a pod has no node yet, when it has none: the
// scheduler's message, if it left one.
func unscheduled(p *corev1.Pod) (why string, ok bool) {
	if p.Spec.NodeName != "" {
		return "", false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
			return c.Message, true
		}
	}
	return "", true
}

// waiting says what a pod that is not ready waits for: the first
// container's waiting reason, else its phase.
func waiting(p *corev1.Pod) string {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, s := range statuses {
			if s.State.Waiting != nil && s.State.Waiting.Reason != "" {
				return fmt.Sprintf("%s (container %s)", s.State.Waiting.Reason, s.Name)
			}
		}
	}
	if p.Status.Phase == corev1.PodRunning {
		return "Running, not ready"
	}
	if p.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(p.Status.Phase)
}

// Finished tells whether a worker's container exiting with status 0 ended
// its job: the pod is not being deleted, nor past its StatefulSet's count
// (a worker scaled away may exit 0 on SIGTERM), and its container exited
// with status 0. count is the StatefulSet's replicas, or -1 for a pod of
// another workload.
func Finished(p *corev1.Pod, container string, count int32) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	if i, err := strconv.Atoi(p.Labels[appsv1.PodIndexLabel]); err == nil && count >= 0 && int32(i) >= count {
		return false
	}
	return ExitedCleanly(p, container)
}

// ExitedCleanly tells whether the pod's container has exited with status 0,
// now or before its last restart.
func ExitedCleanly(p *corev1.Pod, container string) bool {
	return cleanExit(p, container) != nil
}

// cleanExit is the termination with status 0 of the pod's container, now
// or before its last restart; nil when it has none.
func cleanExit(p *corev1.Pod, container string) *corev1.ContainerStateTerminated {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name != container {
			continue
		}
		for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
			if t != nil && t.ExitCode == 0 {
				return t
			}
		}
	}
	return nil
}
