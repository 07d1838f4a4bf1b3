package allocation

import (
	"context"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/diserver"
	"github.com/trainfn/trainfn/reconciler/gates"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// preemptibleJobs are the started, running preemptible DIJobs.
func (a *Allocation) preemptibleJobs(ctx context.Context) ([]preemptible, error) {
	var sets appsv1.StatefulSetList
	if err := a.Client.List(ctx, &sets, client.MatchingLabels{handoff.OperatorNameLabel: handoff.Operator}); err != nil {
		return nil, err
	}
	var out []preemptible
	for i := range sets.Items {
		s := &sets.Items[i]
		if !observed.IsPreemptible(s) || s.Annotations[handoff.ScaledFrom] == "" || s.Annotations[handoff.Ended] != "" || s.DeletionTimestamp != nil {
			continue
		}
		if _, _, err := observed.Bounds(s); err != nil {
			continue
		}
		p, err := a.current(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(x, y preemptible) int {
		return strings.Compare(x.info.Key, y.info.Key)
	})
	return out, nil
}

// current is a job's workers as they are: the node a pod is bound or
// pinned to, which is fixed, else the one reserved for its index, which
// the cache's copy of the allocation may not show yet (fixed too once
// handed out for a gated pod), else the one allocated to it; "" for none,
// which the policy places anew.
func (a *Allocation) current(ctx context.Context, s *appsv1.StatefulSet) (preemptible, error) {
	recorded, _ := observed.Allocation(s)
	p := preemptible{set: s, info: jobInfo(s), prev: make(allocator.NodeList, phase.Replicas(s)), unbound: map[int]bool{}, fixed: map[int]bool{}}
	for i := range p.prev {
		p.unbound[i] = true
		if res, ok := a.reserved[workerOf(s, i)]; ok {
			p.prev[i] = res.node
			if res.pinned {
				p.fixed[i] = true
			}
		} else if i < len(recorded) {
			p.prev[i] = recorded[i]
		}
	}
	var pods corev1.PodList
	if err := a.Client.List(ctx, &pods, client.InNamespace(s.Namespace), client.MatchingLabels(s.Spec.Selector.MatchLabels)); err != nil {
		return p, err
	}
	p.pods = pods.Items
	for i := range pods.Items {
		pod := &pods.Items[i]
		idx, ok := observed.PodIndex(pod)
		if !ok || idx >= len(p.prev) {
			continue
		}
		if node := gates.FixedNode(pod); node != "" {
			p.prev[idx], p.fixed[idx] = node, true
		}
		if pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil {
			delete(p.unbound, idx)
		}
	}
	return p, nil
}

// jobInfo is what the policy knows of a job's StatefulSet.
func jobInfo(s *appsv1.StatefulSet) allocator.JobInfo {
	b, _, _ := observed.Bounds(s)
	requests := resourcehelper.PodRequests(&corev1.Pod{Spec: s.Spec.Template.Spec}, resourcehelper.PodResourcesOptions{})
	return allocator.JobInfo{
		Key:        s.Namespace + "/" + s.Labels[handoff.JobNameLabel],
		Min:        b.Min,
		Max:        b.Max,
		Priority:   s.Annotations[handoff.Priority],
		Request:    resources(requests),
		Throughput: throughputOf(s),
	}
}

func resources(l corev1.ResourceList) allocator.Resources {
	return allocator.Resources{
		MilliCPU: l.Cpu().MilliValue(),
		Memory:   l.Memory().Value(),
		GPU:      l.Name(gpu, "").Value(),
	}
}

// gpu is the resource the allocator counts as GPUs.
const gpu corev1.ResourceName = "nvidia.com/gpu"

// throughputOf reads the throughput the job reported to the DI server;
// none when the annotation is unreadable.
func throughputOf(s *appsv1.StatefulSet) map[int32]float64 {
	p, err := diserver.ParseProfilings(s.Annotations[handoff.Profilings])
	if err != nil {
		return nil
	}
	return p.Throughput
}
