package status

import (
	"cmp"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/trainfn/trainfn/status/phase"
)

// The times of a job's conditions and status, each read from the objects
// that decide it, as no job object keeps them.

// ownedPods are the job's pods that its workloads control now: not those
// of a workload deleted and applied again under the same name, which
// package phase does not count either.
func ownedPods(objs phase.Objects) []*corev1.Pod {
	uids := map[types.UID]bool{}
	for i := range objs.Jobs {
		uids[objs.Jobs[i].UID] = true
	}
	for i := range objs.StatefulSets {
		uids[objs.StatefulSets[i].UID] = true
	}
	var out []*corev1.Pod
	for i := range objs.Pods {
		if ref := metav1.GetControllerOfNoCopy(&objs.Pods[i]); ref != nil && uids[ref.UID] {
			out = append(out, &objs.Pods[i])
		}
	}
	return out
}

// startTime is when the job's first pod started: the earliest
// status.startTime, when the kubelet took the pod, of its pods; nil while
// none has.
func startTime(objs phase.Objects) *metav1.Time {
	var first *metav1.Time
	for _, p := range ownedPods(objs) {
		if t := p.Status.StartTime; t != nil && (first == nil || t.Before(first)) {
			first = t.DeepCopy()
		}
	}
	return first
}

// runningSince is when a running job started to run: when the last of its
// live pods became ready (its Ready condition's transition), as the job
// runs only once every pod does.
func runningSince(objs phase.Objects) metav1.Time {
	var last metav1.Time
	for _, p := range ownedPods(objs) {
		if p.DeletionTimestamp != nil {
			continue
		}
		if ready, since := phase.Ready(p); ready && last.Time.Before(since) {
			last = metav1.NewTime(since)
		}
	}
	return last
}

// disruptedAt is when a restarting job stopped running: the earliest time
// one of its live pods stopped being ready (its Ready condition turned
// false: a container restarted) or, for a pod created in place of another,
// its creation. Later disruptions of the same restart do not move it, as
// an operator keeps a condition's time while its status holds.
func disruptedAt(objs phase.Objects) metav1.Time {
	var first metav1.Time
	for _, p := range ownedPods(objs) {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if ready, _ := phase.Ready(p); ready {
			continue
		}
		at := p.CreationTimestamp
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && !c.LastTransitionTime.IsZero() {
				at = c.LastTransitionTime
			}
		}
		if first.IsZero() || at.Before(&first) {
			first = at
		}
	}
	return first
}

// suspendedAt is when the job was held: when the first suspended Job not
// ended got the Job controller's Suspended condition, else, suspended from
// its creation before the controller saw it, its creation.
func suspendedAt(objs phase.Objects) metav1.Time {
	jobs := make([]*batchv1.Job, len(objs.Jobs))
	for i := range objs.Jobs {
		jobs[i] = &objs.Jobs[i]
	}
	slices.SortFunc(jobs, func(a, b *batchv1.Job) int { return cmp.Compare(a.Name, b.Name) })
	for _, j := range jobs {
		if j.Spec.Suspend == nil || !*j.Spec.Suspend {
			continue
		}
		if o, _ := phase.JobOutcome(j); o != "" {
			continue
		}
		if c := jobCondition(j, batchv1.JobSuspended); c != nil && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime
		}
		return j.CreationTimestamp
	}
	return metav1.Time{}
}
