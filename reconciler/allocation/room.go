package allocation

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// podsPage bounds each list request for pods: the allocator reads every
// bound pod of the cluster when it counts the nodes' room, and pages keep
// its memory flat in a large cluster.
const podsPage = 500

// activeBound selects the pods that take room on a node: bound, and not
// finished.
var activeBound = fields.AndSelectors(
	fields.OneTermNotEqualSelector("spec.nodeName", ""),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
)

// room is what the allocator knows of the nodes at one moment.
type room struct {
	// free is each node's room for preemptible workers, by name.
	free  map[string]*allocator.NodeInfo
	nodes map[string]*corev1.Node
	// bound are the nodes of the jobs' workers bound to one, as the API
	// lists them.
	bound map[worker]string
}

// countRoom is each node's allocatable room minus what the pods bound to
// it request and what is reserved for workers not bound yet, the workers
// of the jobs being optimized aside: their room is the policy's to hand
// out. Every pod the allocator may read counts (eachBoundPod), another
// team's too, which takes room all the same. A node that takes
// no new pods (cordoned, not ready, tainted NoSchedule) offers only the
// room the optimized workers on it hold, so that they keep it and no new
// worker goes there. Reservations of pods now bound are dropped: the list
// counts them.
func (a *Allocation) countRoom(ctx context.Context, optimized map[string]bool) (room, error) {
	var nodes corev1.NodeList
	if err := a.Client.List(ctx, &nodes); err != nil {
		return room{}, err
	}
	r := room{free: map[string]*allocator.NodeInfo{}, nodes: map[string]*corev1.Node{}, bound: map[worker]string{}}
	open := map[string]bool{}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		r.nodes[n.Name] = n
		open[n.Name] = schedulable(n)
		info := &allocator.NodeInfo{Name: n.Name}
		if open[n.Name] {
			info.Free = resources(n.Status.Allocatable)
		}
		r.free[n.Name] = info
	}
	err := a.eachBoundPod(ctx, func(p *corev1.Pod) {
		if w, ok := boundWorkerOf(p); ok {
			// The list counts its room now, not its reservation.
			delete(a.reserved, w)
			r.bound[w] = p.Spec.NodeName
		}
		node := r.free[p.Spec.NodeName]
		if node == nil || observed.Finished(p) {
			return
		}
		request := resources(resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
		switch {
		case optimized[jobKeyOf(p)]:
			if !open[node.Name] {
				node.Free = node.Free.Add(request)
			}
		case open[node.Name]:
			node.Free = node.Free.Sub(request)
		}
	})
	if err != nil {
		return room{}, err
	}
	if err := a.forgetScaledAway(ctx); err != nil {
		return room{}, err
	}
	for w, res := range a.reserved {
		if node := r.free[res.node]; node != nil && open[res.node] && !optimized[w.key()] {
			node.Free = node.Free.Sub(res.request)
		}
	}
	return r, nil
}

// eachBoundPod visits every pod bound to a node and not finished that the
// allocator may read, listed live a page at a time: every namespace's when
// its rights reach them (a cluster-wide install, even one started to watch
// some namespaces only), else those it watches (a Role in each). Whether
// they reach is learnt once, from the API server's answer.
func (a *Allocation) eachBoundPod(ctx context.Context, visit func(*corev1.Pod)) error {
	if !a.namespacedOnly || len(a.Namespaces) == 0 {
		err := a.listBoundPods(ctx, metav1.NamespaceAll, visit)
		if !apierrors.IsForbidden(err) || len(a.Namespaces) == 0 {
			return err
		}
		a.namespacedOnly = true
		log.FromContext(ctx).Info("the allocator may not list every namespace's pods: it counts those of the namespaces it watches", "namespaces", a.Namespaces)
	}
	for _, ns := range a.Namespaces {
		if err := a.listBoundPods(ctx, ns, visit); err != nil {
			return err
		}
	}
	return nil
}

// listBoundPods visits the bound, unfinished pods of a namespace, or of
// all.
func (a *Allocation) listBoundPods(ctx context.Context, ns string, visit func(*corev1.Pod)) error {
	opts := []client.ListOption{client.InNamespace(ns), client.MatchingFieldsSelector{Selector: activeBound}, client.Limit(podsPage)}
	for {
		var pods corev1.PodList
		if err := a.Live.List(ctx, &pods, opts...); err != nil {
			return err
		}
		for i := range pods.Items {
			visit(&pods.Items[i])
		}
		if pods.Continue == "" {
			return nil
		}
		opts = append(opts[:3:3], client.Continue(pods.Continue))
	}
}

// forgetScaledAway drops the reservations of workers whose StatefulSet no
// longer has their index, or is gone. It reads the StatefulSets live, in
// the namespaces of the reservations (those the reconciler may read): the
// cache may not have seen a count just raised yet, and forgetting the new
// workers' reservations would hand their room out twice.
func (a *Allocation) forgetScaledAway(ctx context.Context) error {
	if len(a.reserved) == 0 {
		return nil
	}
	count := map[worker]int{}
	listed := map[string]bool{}
	for w := range a.reserved {
		if listed[w.namespace] {
			continue
		}
		listed[w.namespace] = true
		var sets appsv1.StatefulSetList
		if err := a.Live.List(ctx, &sets, client.InNamespace(w.namespace), client.MatchingLabels{handoff.OperatorNameLabel: handoff.Operator}); err != nil {
			return err
		}
		for i := range sets.Items {
			s := &sets.Items[i]
			count[workerOf(s, 0)] = int(phase.Replicas(s))
		}
	}
	for w := range a.reserved {
		first := w
		first.index = 0
		if n, ok := count[first]; !ok || w.index >= n {
			delete(a.reserved, w)
		}
	}
	return nil
}

// jobKeyOf is the key of the trainfn DIJob a pod belongs to; "" for any
// other pod, a pod of another kind's job of the same name among them. A
// pod rendered before pods carried their job's kind is known by its job's
// name alone, as it was then.
func jobKeyOf(p *corev1.Pod) string {
	if p.Labels[handoff.OperatorNameLabel] != handoff.Operator || p.Labels[handoff.JobNameLabel] == "" {
		return ""
	}
	if kind, labelled := p.Labels[handoff.KindLabel]; labelled && kind != handoff.DIJobKind {
		return ""
	}
	return p.Namespace + "/" + p.Labels[handoff.JobNameLabel]
}

// eligible tells the nodes a pod of template may be placed on: it matches
// the template's node selector and required node affinity, and tolerates
// the node's NoSchedule and NoExecute taints, as the scheduler would check.
func (r room) eligible(template *corev1.PodTemplateSpec) func(string) bool {
	pod := &corev1.Pod{ObjectMeta: template.ObjectMeta, Spec: template.Spec}
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	return func(name string) bool {
		n := r.nodes[name]
		if n == nil {
			return false
		}
		if ok, err := affinity.Match(n); err != nil || !ok {
			return false
		}
		_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, pod.Spec.Tolerations, keepsPodsAway, false)
		return !untolerated
	}
}

func keepsPodsAway(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// schedulable tells whether a node takes new pods: it is ready and not
// cordoned. Taints are the pods' to tolerate (see eligible).
func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable || n.DeletionTimestamp != nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
