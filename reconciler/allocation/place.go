package allocation

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/reconciler/gates"
	"github.com/trainfn/trainfn/reconciler/observed"
)

// Place chooses nodes for workers of a job, by index: its first ones, or
// those the DI server or a person added, or one whose node can no longer
// take it. A worker already placed and not bound yet keeps its node while
// the node can still take it: placing it again would count its room twice.
// A worker whose pod is bound or pinned already keeps its node whatever
// the caller read: the pod will not move. The placements are reserved
// before Place returns, so that the next one counts them. A worker that
// finds no room is left out, for the scheduler to place.
func (a *Allocation) Place(ctx context.Context, s *appsv1.StatefulSet, indexes []int) map[int]string {
	return a.place(ctx, s, indexes, false)
}

// PlaceGated is Place for workers whose pods the caller read at the
// allocation gate and pins to the nodes returned: those nodes are final
// from then on, and the periods keep them before the cache shows the pods
// pinned.
func (a *Allocation) PlaceGated(ctx context.Context, s *appsv1.StatefulSet, indexes []int) map[int]string {
	return a.place(ctx, s, indexes, true)
}

func (a *Allocation) place(ctx context.Context, s *appsv1.StatefulSet, indexes []int, pinning bool) map[int]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reserved == nil {
		a.reserved = map[worker]reservation{}
	}
	out := map[int]string{}
	var missing []int
	for _, i := range indexes {
		w := workerOf(s, i)
		if res, ok := a.reserved[w]; ok && a.Usable(ctx, s, res.node) {
			out[i] = res.node
			res.pinned = res.pinned || pinning
			a.reserved[w] = res
			continue
		}
		delete(a.reserved, w)
		missing = append(missing, i)
	}
	if len(missing) == 0 {
		return out
	}
	missing, err := a.keepFixed(ctx, s, missing, out)
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the workers' pods")
		return out
	}
	if len(missing) == 0 {
		return out
	}
	r, err := a.countRoom(ctx, nil)
	if err != nil {
		log.FromContext(ctx).Error(err, "counting the nodes' room")
		return out
	}
	info := jobInfo(s)
	info.Min, info.Max = int32(len(missing)), int32(len(missing))
	info.Eligible = r.eligible(&s.Spec.Template)
	list, err := a.Policy.Allocate(info, r.free)
	if err != nil {
		a.Recorder.Eventf(s, nil, corev1.EventTypeWarning, "NotAllocated", "Scale", "%v: the scheduler places them", err)
		return out
	}
	for k, i := range missing {
		out[i] = list[k]
		a.reserved[workerOf(s, i)] = reservation{node: list[k], request: info.Request, pinned: pinning}
	}
	return out
}

// keepFixed sets in out the node of every index among missing whose pod
// the API shows bound or pinned, and returns the other indexes. Such an
// index lost its reservation when its pod was counted bound, while the
// caller's copy of the pod may still show it gated: placed anew, it would
// be recorded on a node its pod is not on. A pinned pod not bound yet gets
// its reservation back, so that the room it is about to take is counted.
func (a *Allocation) keepFixed(ctx context.Context, s *appsv1.StatefulSet, missing []int, out map[int]string) ([]int, error) {
	var pods corev1.PodList
	if err := a.Live.List(ctx, &pods, client.InNamespace(s.Namespace), client.MatchingLabels(s.Spec.Selector.MatchLabels)); err != nil {
		return nil, err
	}
	fixed := map[int]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if idx, ok := observed.PodIndex(p); ok && gates.FixedNode(p) != "" {
			fixed[idx] = p
		}
	}
	var left []int
	for _, i := range missing {
		p, ok := fixed[i]
		if !ok {
			left = append(left, i)
			continue
		}
		out[i] = gates.FixedNode(p)
		if p.Spec.NodeName == "" {
			a.reserved[workerOf(s, i)] = reservation{node: out[i], request: jobInfo(s).Request, pinned: true}
		}
	}
	return left, nil
}

// Usable tells whether a node chosen for a worker may still take it: it
// exists, takes new pods, and the worker may run there. A pod pinned to a
// node that is not usable would wait for good.
func (a *Allocation) Usable(ctx context.Context, s *appsv1.StatefulSet, node string) bool {
	var n corev1.Node
	if err := a.Client.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil || !schedulable(&n) {
		return false
	}
	r := room{nodes: map[string]*corev1.Node{node: &n}}
	return r.eligible(&s.Spec.Template)(node)
}
