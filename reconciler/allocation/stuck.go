package allocation

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/reconciler/gates"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/render/handoff"
)

// stuckAfter is how long a pinned pod may wait for its node before it is
// replaced: long enough for the scheduler to retry after the pods leaving
// that node are gone.
const stuckAfter = 30 * time.Second

// unstick replaces the pods of a job that wait for good: pinned to a node
// that is gone, cordoned or closed to them, or that has not had room for
// them for a while (its room was counted free and was not). A pod's node
// affinity cannot be widened, so the StatefulSet makes it again, gated,
// and it is placed anew; its index counts as unplaced meanwhile.
func (a *Allocation) unstick(ctx context.Context, j preemptible) {
	wait := max(a.Period, stuckAfter)
	for i := range j.pods {
		p := &j.pods[i]
		node := gates.PinnedTo(p)
		if node == "" || p.DeletionTimestamp != nil || slices.ContainsFunc(p.Spec.SchedulingGates, gates.IsAllocationGate) {
			continue
		}
		if a.Usable(ctx, j.set, node) && !unschedulableFor(p, a.Now(), wait) {
			continue
		}
		// Unchanged since read: a pod bound meanwhile runs, and stays.
		if err := a.Writer.Delete(ctx, p, client.Preconditions{UID: &p.UID, ResourceVersion: &p.ResourceVersion}); err != nil {
			if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				log.FromContext(ctx).Error(err, "replacing a pod stuck on its node", "pod", p.Name, "node", node)
			}
			continue
		}
		if idx, ok := observed.PodIndex(p); ok {
			// Placed anew against the room as it is, not pinned back.
			delete(a.reserved, workerOf(j.set, idx))
		}
		a.Recorder.Eventf(j.set, nil, corev1.EventTypeWarning, "Replaced", "Allocate", "pod %s could not run on %s, the node it was pinned to: it is made again and placed anew", p.Name, node)
		if idx, ok := observed.PodIndex(p); ok && idx < len(j.prev) {
			j.prev[idx] = ""
			j.unbound[idx] = true
			delete(j.fixed, idx)
		}
	}
}

// unschedulableFor tells whether the scheduler has found no room for a
// pod for at least d since it was pinned: a pod gated a while carries the
// time it was created as its condition's.
func unschedulableFor(p *corev1.Pod, now time.Time, d time.Duration) bool {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
			continue
		}
		since := c.LastTransitionTime.Time
		if pinned, err := time.Parse(time.RFC3339, p.Annotations[handoff.PinnedAt]); err == nil && pinned.After(since) {
			since = pinned
		}
		return now.Sub(since) >= d
	}
	return false
}
