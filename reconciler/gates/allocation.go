package gates

import (
	"context"
	"errors"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Allocator chooses the nodes of a preemptible DIJob's gated workers, by
// index, and holds them for the pods being pinned; the allocator does.
type Allocator interface {
	PlaceGated(ctx context.Context, s *appsv1.StatefulSet, indexes []int) map[int]string
}

// Pinner lifts the allocation gate of a preemptible DIJob's new pods: each
// waits at the gate until it is pinned to the node the allocator chose for
// its index (a required node affinity, which a gated pod may gain), then
// the gate goes. A pod whose index has no usable node (past the
// allocation, because the DI server or a person scaled the job up; or on a
// node since gone, cordoned or closed to it) is placed first. One that
// finds no room, or any pod when no allocator runs, goes to the scheduler
// unpinned.
type Pinner struct {
	Writer write.Writer
	// Live reads the StatefulSet as the API has it, to record the nodes
	// given out beside those it records already.
	Live client.Reader
	// Allocator is nil when no allocator runs.
	Allocator Allocator
	// Now stamps when a pod was pinned.
	Now func() time.Time
}

// Lift lifts the allocation gate of the gated pods of s, a preemptible
// DIJob's workers.
func (p *Pinner) Lift(ctx context.Context, j *observed.Job, s *appsv1.StatefulSet) error {
	var gated []*corev1.Pod
	for i := range j.Pods {
		pod := &j.Pods[i]
		if pod.DeletionTimestamp == nil && slices.ContainsFunc(pod.Spec.SchedulingGates, IsAllocationGate) {
			gated = append(gated, pod)
		}
	}
	if len(gated) == 0 {
		return nil
	}
	var list allocator.NodeList
	if p.Allocator != nil {
		var err error
		if list, err = p.placeGated(ctx, s, gated); err != nil {
			return err
		}
	}
	var errs []error
	for _, pod := range gated {
		node := ""
		if i, ok := observed.PodIndex(pod); ok && i < len(list) {
			node = list[i]
		}
		err := p.Writer.MergePatch(ctx, pod, ungate(pod, node, p.Now()))
		if apierrors.IsNotFound(err) {
			continue
		}
		if err == nil {
			log.FromContext(ctx).V(1).Info("lifted the allocation gate", "pod", pod.Name, "node", node)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// placeGated is the job's allocation with the node of every gated pod's
// index that has room, recorded on the StatefulSet; "" where none has. A
// node recorded for an index is not taken on trust: the room it had may
// have gone to another job since (the index was scaled away and back), so
// PlaceGated keeps it only while it is the index's reservation. The other
// indexes keep what the StatefulSet records now, not what the cache read:
// a stale copy would record nodes the period has changed since, or an
// index's node from before its pod was pinned elsewhere.
func (p *Pinner) placeGated(ctx context.Context, s *appsv1.StatefulSet, gated []*corev1.Pod) (allocator.NodeList, error) {
	var indexes []int
	for _, pod := range gated {
		if i, ok := observed.PodIndex(pod); ok && i < int(phase.Replicas(s)) {
			indexes = append(indexes, i)
		}
	}
	placed := p.Allocator.PlaceGated(ctx, s, indexes)
	var list allocator.NodeList
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var live appsv1.StatefulSet
		if err := p.Live.Get(ctx, client.ObjectKeyFromObject(s), &live); err != nil {
			return err
		}
		recorded, _ := observed.Allocation(&live)
		list = make(allocator.NodeList, phase.Replicas(&live))
		copy(list, recorded)
		for _, i := range indexes {
			if i < len(list) {
				list[i] = placed[i]
			}
		}
		if slices.Equal(list, recorded) {
			return nil
		}
		patch := map[string]any{"metadata": map[string]any{
			"resourceVersion": live.ResourceVersion,
			"annotations":     map[string]string{handoff.Allocation: string(write.MustJSON(list))},
		}}
		return p.Writer.MergePatch(ctx, &live, patch)
	})
	return list, err
}

// IsAllocationGate tells the allocation gate from other scheduling gates.
func IsAllocationGate(g corev1.PodSchedulingGate) bool { return g.Name == handoff.AllocationGate }

// pinKey is the node field a pinned pod's affinity requires.
const pinKey = "metadata.name"

// ungate is the patch that removes the allocation gate and, for a node,
// requires it: a gated pod's node affinity may only be narrowed, so the
// node is added to every term the template wrote. The resourceVersion makes
// the patch fail rather than drop a gate another party added meanwhile.
func ungate(p *corev1.Pod, node string, now time.Time) map[string]any {
	spec := map[string]any{"schedulingGates": without(p.Spec.SchedulingGates, IsAllocationGate)}
	meta := map[string]any{"resourceVersion": p.ResourceVersion}
	if node == "" {
		return map[string]any{"metadata": meta, "spec": spec}
	}
	pin := corev1.NodeSelectorRequirement{Key: pinKey, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	var terms []corev1.NodeSelectorTerm
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = slices.Clone(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
	}
	if len(terms) == 0 {
		terms = []corev1.NodeSelectorTerm{{}}
	}
	for i := range terms {
		terms[i].MatchFields = append(slices.Clone(terms[i].MatchFields), pin)
	}
	spec["affinity"] = map[string]any{"nodeAffinity": map[string]any{
		"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": terms},
	}}
	meta["annotations"] = map[string]string{handoff.PinnedAt: now.UTC().Format(time.RFC3339)}
	return map[string]any{"metadata": meta, "spec": spec}
}

// FixedNode is the node a worker's pod will run on whatever a new
// allocation says: the one it is bound to, or the one it was pinned to
// when its gate was lifted; "" while it waits at the gate, or went to the
// scheduler unpinned, or is being deleted.
func FixedNode(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil || slices.ContainsFunc(p.Spec.SchedulingGates, IsAllocationGate) {
		return ""
	}
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	return PinnedTo(p)
}

// PinnedTo is the node the reconciler pinned an unbound pod to; "" for a
// pod it did not pin, or one already bound.
func PinnedTo(p *corev1.Pod) string {
	if p.Spec.NodeName != "" || p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil ||
		p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == pinKey && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}
