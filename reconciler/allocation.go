package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/diserver"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/labels"
)

// Allocation runs the allocator of seed 001 over the preemptible DIJobs:
// every period it lets the policy decide each job's worker count and the
// node of every new worker, then scales the job's StatefulSet and records
// the nodes in its allocation annotation, where the reconciler reads them
// to pin each new pod before its scheduling gate is lifted. The scheduler
// still binds every pod.
type Allocation struct {
	// Client reads the cache (StatefulSets, nodes) and writes.
	Client client.Client
	// Live lists pods straight from the API, a page at a time, to count
	// what every pod on a node requests: the cache holds trainfn's pods only.
	Live       client.Reader
	Policy     allocator.Policy
	Period     time.Duration
	Namespaces []string
	Recorder   recorder.EventRecorder
	Metrics    *Metrics

	// mu keeps a period's decisions and a single placement from counting
	// the same free room twice.
	mu sync.Mutex
}

// Start runs the periods until ctx ends; only the leader runs it.
func (a *Allocation) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := a.Optimize(ctx); err != nil {
			log.FromContext(ctx).Error(err, "allocation period")
		}
	}, a.Period)
	return nil
}

// preemptible is one preemptible DIJob's StatefulSet as the allocator sees it.
type preemptible struct {
	set  *appsv1.StatefulSet
	info allocator.JobInfo
	prev allocator.NodeList
}

// Optimize runs one period.
func (a *Allocation) Optimize(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	jobs, err := a.preemptibleJobs(ctx)
	if err != nil || len(jobs) == 0 {
		return err
	}
	nodes, err := a.freeRoom(ctx, jobs)
	if err != nil {
		return err
	}
	infos := map[string]allocator.JobInfo{}
	prev := map[string]allocator.NodeList{}
	for _, j := range jobs {
		infos[j.info.Key], prev[j.info.Key] = j.info, j.prev
	}
	decided, policyErr := a.Policy.Optimize(infos, nodes, prev)
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(decided)) {
		j := jobOfKey(jobs, key)
		list := decided[key]
		if len(list) == 0 {
			// Its minimum finds no room now; it keeps what it runs.
			continue
		}
		errs = append(errs, a.apply(ctx, j, list))
	}
	if policyErr != nil {
		log.FromContext(ctx).Info("some preemptible jobs do not fit", "reason", policyErr.Error())
	}
	return errors.Join(errs...)
}

func jobOfKey(jobs []preemptible, key string) preemptible {
	for _, j := range jobs {
		if j.info.Key == key {
			return j
		}
	}
	return preemptible{}
}

// apply scales a job to its decided count and records the nodes.
func (a *Allocation) apply(ctx context.Context, j preemptible, list allocator.NodeList) error {
	current := replicas(j.set)
	recorded, _ := allocationOf(j.set)
	if int32(len(list)) == current && slices.Equal(recorded, list) {
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]string{handoff.Allocation: string(mustJSON(list))}}}
	if int32(len(list)) != current {
		patch["spec"] = map[string]any{"replicas": len(list)}
	}
	if err := mergePatch(ctx, a.Client, a.Metrics, j.set, patch); err != nil {
		return err
	}
	if int32(len(list)) != current {
		a.Metrics.Scales.WithLabelValues("Allocated").Inc()
		a.Recorder.Eventf(j.set, nil, corev1.EventTypeNormal, "Allocated", "Scale", "the allocator gives the job %d workers (was %d)", len(list), current)
		log.FromContext(ctx).Info("allocated workers", "statefulSet", j.set.Name, "namespace", j.set.Namespace, "from", current, "to", len(list))
	}
	return nil
}

// First places a new preemptible job's first workers, before the
// reconciler starts it; nil when they find no room, which leaves them to
// the scheduler.
func (a *Allocation) First(ctx context.Context, s *appsv1.StatefulSet, count int32) allocator.NodeList {
	a.mu.Lock()
	defer a.mu.Unlock()
	nodes, err := a.freeRoom(ctx, nil)
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the nodes' free room")
		return nil
	}
	info := jobInfo(s)
	info.Min, info.Max = count, count
	list, err := a.Policy.Allocate(info, nodes)
	if err != nil {
		a.Recorder.Eventf(s, nil, corev1.EventTypeWarning, "NotAllocated", "Scale", "%v: the scheduler places them", err)
		return nil
	}
	return list
}

// Place chooses nodes for the workers of indexes from..to-1 of a job that
// the DI server or a person scaled up past its allocation; nil when they
// find no room.
func (a *Allocation) Place(ctx context.Context, s *appsv1.StatefulSet, from, to int32) allocator.NodeList {
	if to <= from {
		return nil
	}
	return a.First(ctx, s, to-from)
}

// preemptibleJobs are the started, running preemptible DIJobs.
func (a *Allocation) preemptibleJobs(ctx context.Context) ([]preemptible, error) {
	var sets appsv1.StatefulSetList
	if err := a.Client.List(ctx, &sets, client.MatchingLabels{labels.OperatorName: labels.Operator}); err != nil {
		return nil, err
	}
	var out []preemptible
	for i := range sets.Items {
		s := &sets.Items[i]
		if !isPreemptible(s) || s.Annotations[handoff.ScaledFrom] == "" || s.Annotations[handoff.Ended] != "" {
			continue
		}
		if _, _, err := bounds(s); err != nil {
			continue
		}
		out = append(out, preemptible{set: s, info: jobInfo(s), prev: a.running(ctx, s)})
	}
	return out, nil
}

// running are the nodes of a job's workers now: a scheduled pod's node,
// else the one allocated to its index; "" for neither, which the policy
// places anew.
func (a *Allocation) running(ctx context.Context, s *appsv1.StatefulSet) allocator.NodeList {
	recorded, _ := allocationOf(s)
	list := make(allocator.NodeList, replicas(s))
	for i := range list {
		if i < len(recorded) {
			list[i] = recorded[i]
		}
	}
	var pods corev1.PodList
	if err := a.Client.List(ctx, &pods, client.InNamespace(s.Namespace), client.MatchingLabels(s.Spec.Selector.MatchLabels)); err == nil {
		for _, p := range pods.Items {
			if i, ok := podIndex(&p); ok && i < len(list) && p.Spec.NodeName != "" {
				list[i] = p.Spec.NodeName
			}
		}
	}
	return list
}

func isPreemptible(s *appsv1.StatefulSet) bool {
	_, di := s.Annotations[handoff.DIJobGeneration]
	_, elastic := s.Annotations[handoff.ElasticWorkers]
	return di && elastic
}

// jobInfo is what the policy knows of a job's StatefulSet.
func jobInfo(s *appsv1.StatefulSet) allocator.JobInfo {
	b, _, _ := bounds(s)
	requests := resourcehelper.PodRequests(&corev1.Pod{Spec: s.Spec.Template.Spec}, resourcehelper.PodResourcesOptions{})
	return allocator.JobInfo{
		Key:        s.Namespace + "/" + s.Labels[labels.JobName],
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

// allocationOf reads a StatefulSet's allocation annotation.
func allocationOf(s *appsv1.StatefulSet) (allocator.NodeList, error) {
	v, ok := s.Annotations[handoff.Allocation]
	if !ok {
		return nil, nil
	}
	var list allocator.NodeList
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", handoff.Allocation, err)
	}
	return list, nil
}

// throughputOf reads the throughput the job reported to the DI server;
// none when the annotation is unreadable.
func throughputOf(s *appsv1.StatefulSet) map[int32]float64 {
	p, err := diserver.ParseProfilings(s.Annotations[handoff.Profilings])
	if err != nil {
		return nil
	}
	return p.Throughput
}

// podIndex is a StatefulSet pod's ordinal, from its label.
func podIndex(p *corev1.Pod) (int, bool) {
	i, err := strconv.Atoi(p.Labels[labels.StatefulSetPodIndex])
	return i, err == nil && i >= 0
}
