package reconciler

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/render/labels"
)

// podsPage bounds each list request for pods: the allocator reads every
// pod each period, and pages keep its memory flat in a large cluster.
const podsPage = 500

// freeRoom is each schedulable node's allocatable room minus what its pods
// request, the workers of the given preemptible jobs aside: their room is
// the policy's to hand out.
func (a *Allocation) freeRoom(ctx context.Context, jobs []preemptible) (map[string]*allocator.NodeInfo, error) {
	var nodes corev1.NodeList
	if err := a.Client.List(ctx, &nodes); err != nil {
		return nil, err
	}
	out := map[string]*allocator.NodeInfo{}
	for _, n := range nodes.Items {
		if schedulable(&n) {
			out[n.Name] = &allocator.NodeInfo{Name: n.Name, Free: resources(n.Status.Allocatable)}
		}
	}
	optimized := map[string]bool{}
	for _, j := range jobs {
		optimized[j.set.Namespace+"/"+j.set.Labels[labels.JobName]] = true
	}
	namespaces := a.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	for _, ns := range namespaces {
		opts := []client.ListOption{client.InNamespace(ns), client.Limit(podsPage)}
		for {
			var pods corev1.PodList
			if err := a.Live.List(ctx, &pods, opts...); err != nil {
				return nil, err
			}
			for i := range pods.Items {
				p := &pods.Items[i]
				node := out[p.Spec.NodeName]
				if node == nil || finished(p) || optimized[p.Namespace+"/"+p.Labels[labels.JobName]] && p.Labels[labels.OperatorName] == labels.Operator {
					continue
				}
				node.Free = node.Free.Sub(resources(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})))
			}
			if pods.Continue == "" {
				break
			}
			opts = []client.ListOption{client.InNamespace(ns), client.Limit(podsPage), client.Continue(pods.Continue)}
		}
	}
	return out, a.reserve(ctx, out, optimized)
}

// reserve takes from the nodes the room allocated to workers that are not
// bound to their node yet, whose pods the scheduler has not counted: two
// placements in a row would otherwise both count it free.
func (a *Allocation) reserve(ctx context.Context, nodes map[string]*allocator.NodeInfo, optimized map[string]bool) error {
	var sets appsv1.StatefulSetList
	if err := a.Client.List(ctx, &sets, client.MatchingLabels{labels.OperatorName: labels.Operator}); err != nil {
		return err
	}
	for i := range sets.Items {
		s := &sets.Items[i]
		if !isPreemptible(s) || optimized[s.Namespace+"/"+s.Labels[labels.JobName]] {
			continue
		}
		list, _ := allocationOf(s)
		bound := map[int]bool{}
		var pods corev1.PodList
		if err := a.Client.List(ctx, &pods, client.InNamespace(s.Namespace), client.MatchingLabels(s.Spec.Selector.MatchLabels)); err != nil {
			return err
		}
		for _, p := range pods.Items {
			if i, ok := podIndex(&p); ok && p.Spec.NodeName != "" {
				bound[i] = true
			}
		}
		request := jobInfo(s).Request
		for i, name := range list {
			if node := nodes[name]; node != nil && int32(i) < replicas(s) && !bound[i] {
				node.Free = node.Free.Sub(request)
			}
		}
	}
	return nil
}

// schedulable tells whether the allocator may place workers on a node: it
// is ready, not cordoned, and has no taint that keeps new pods away.
func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
