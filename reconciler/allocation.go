package reconciler

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/diserver"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Allocation runs DI-orchestrator's allocator over the preemptible DIJobs:
// every period it lets the policy decide each job's worker count and the
// node of every new worker, then scales the job's StatefulSet and records
// the nodes in its allocation annotation, where the reconciler reads them
// to pin each new pod before its scheduling gate is lifted. The scheduler
// still binds every pod.
//
// A pin is final (a pod's node affinity cannot be widened), so every
// placement is made under one lock against the room the cluster has now:
// what its bound pods request, plus what earlier placements reserved for
// pods not bound yet, until a later count of the room sees them bound.
type Allocation struct {
	// Client reads the cache (StatefulSets, nodes, the jobs' pods) and
	// writes.
	Client client.Client
	// Live lists every bound pod straight from the API, a page at a time:
	// the cache holds trainfn's pods only, and the room on a node is
	// everybody's.
	Live     client.Reader
	Policy   allocator.Policy
	Period   time.Duration
	Recorder recorder.EventRecorder
	Metrics  *Metrics
	// Now tells how long a pinned pod has waited for its node.
	Now func() time.Time

	mu sync.Mutex
	// reserved are the nodes chosen for workers whose pods are not bound
	// yet, by worker.
	reserved map[worker]reservation
}

// worker is one index of a preemptible job's StatefulSet.
type worker struct {
	namespace, job, set string
	index               int
}

func (w worker) key() string { return w.namespace + "/" + w.job }

type reservation struct {
	node    string
	request allocator.Resources
	// pinned is set once the node was handed out for a gated pod, which is
	// pinned to it next: the node is final then, before the cache shows
	// the pod pinned, and a period must not give the index another.
	pinned bool
}

// Start runs the periods until ctx ends; only the leader runs it.
func (a *Allocation) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		// A period that hangs on the API server must not hold the lock
		// that placements wait for.
		ctx, cancel := context.WithTimeout(ctx, max(a.Period, time.Minute))
		defer cancel()
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
	// prev are the nodes of its workers now: a bound pod's, else the one
	// allocated to its index.
	prev allocator.NodeList
	// unbound are the indexes whose pods are not bound to a node.
	unbound map[int]bool
	// fixed are the indexes whose pods are bound or pinned to their node
	// in prev: a new allocation keeps that node or drops the index.
	fixed map[int]bool
	pods  []corev1.Pod
}

// Optimize runs one period.
func (a *Allocation) Optimize(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	jobs, err := a.preemptibleJobs(ctx)
	if err != nil || len(jobs) == 0 {
		return err
	}
	optimized := map[string]bool{}
	for _, j := range jobs {
		optimized[j.info.Key] = true
		a.unstick(ctx, j)
	}
	r, err := a.countRoom(ctx, optimized)
	if err != nil {
		return err
	}
	infos := map[string]allocator.JobInfo{}
	prev := map[string]allocator.NodeList{}
	for _, j := range jobs {
		// The count just dropped the reservations of pods bound since;
		// the cache may not show them bound yet.
		for i := range j.prev {
			if node, ok := r.bound[workerOf(j.set, i)]; ok {
				j.prev[i], j.fixed[i] = node, true
				delete(j.unbound, i)
			}
		}
		j.info.Eligible = r.eligible(&j.set.Spec.Template)
		j.info.Fixed = j.fixed
		infos[j.info.Key], prev[j.info.Key] = j.info, j.prev
	}
	decided, policyErr := a.Policy.Optimize(infos, r.free, prev)
	if policyErr != nil {
		log.FromContext(ctx).Info("some preemptible jobs do not fit", "reason", policyErr.Error())
	}
	// Jobs that shrink first: their room is what the growing ones are
	// given, and a pod of a job scaled up before it is free would be
	// placed while the room is still taken.
	slices.SortStableFunc(jobs, func(x, y preemptible) int {
		return cmp.Compare(growth(x, decided[x.info.Key]), growth(y, decided[y.info.Key]))
	})
	var errs []error
	shrunk := true
	for _, j := range jobs {
		list := decided[j.info.Key]
		if len(list) == 0 {
			// Its minimum finds no room now; it keeps what it runs.
			continue
		}
		grows := growth(j, list)
		if grows > 0 && !shrunk {
			// A job that was to give up room still holds it: growing
			// now would overcommit the nodes. The next period decides
			// again from what runs.
			continue
		}
		applied, err := a.apply(ctx, j, list)
		errs = append(errs, err)
		if grows < 0 && !applied {
			shrunk = false
		}
	}
	return errors.Join(errs...)
}

// growth is how many workers a decided list adds to a job; none when
// nothing is decided for it.
func growth(j preemptible, list allocator.NodeList) int {
	if len(list) == 0 {
		return 0
	}
	return len(list) - int(phase.Replicas(j.set))
}

// apply scales a job to its decided count and records the nodes, and
// tells whether it did, on condition that the StatefulSet is still the one
// read: a count the DI server or a person set meanwhile is not
// overwritten, and the next period decides again from it.
func (a *Allocation) apply(ctx context.Context, j preemptible, list allocator.NodeList) (bool, error) {
	current := phase.Replicas(j.set)
	recorded, _ := allocationOf(j.set)
	if int32(len(list)) == current && slices.Equal(recorded, list) {
		a.reserve(j, list)
		return true, nil
	}
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": j.set.ResourceVersion,
		"annotations":     map[string]string{handoff.Allocation: string(mustJSON(list))},
	}}
	if int32(len(list)) != current {
		patch["spec"] = map[string]any{"replicas": len(list)}
	}
	if err := mergePatch(ctx, a.Client, a.Metrics, j.set, patch); err != nil {
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return false, err
	}
	// Reserved once recorded: until then, the reservations stand for what
	// the pods are being pinned to.
	a.reserve(j, list)
	if int32(len(list)) != current {
		a.Metrics.Scales.WithLabelValues("Allocated").Inc()
		a.Recorder.Eventf(j.set, nil, corev1.EventTypeNormal, "Allocated", "Scale", "the allocator gives the job %d workers (was %d)", len(list), current)
		log.FromContext(ctx).Info("allocated workers", "statefulSet", j.set.Name, "namespace", j.set.Namespace, "from", current, "to", len(list))
	}
	return true, nil
}

// reserve records the nodes of a job's unbound workers, and forgets those
// of indexes it no longer has.
func (a *Allocation) reserve(j preemptible, list allocator.NodeList) {
	if a.reserved == nil {
		a.reserved = map[worker]reservation{}
	}
	for w := range a.reserved {
		if w.namespace == j.set.Namespace && w.set == j.set.Name && w.index >= len(list) {
			delete(a.reserved, w)
		}
	}
	for i, node := range list {
		w := workerOf(j.set, i)
		if i >= len(j.prev) {
			// An index the job is scaled up to: its pod, when made, must
			// find its node reserved, unless a gated pod of a count set
			// since has been placed already.
			if _, placed := a.reserved[w]; !placed {
				a.reserved[w] = reservation{node: node, request: j.info.Request}
			}
			continue
		}
		if j.unbound[i] {
			// A fixed index's node is the one it had: the policy keeps it.
			a.reserved[w] = reservation{node: node, request: j.info.Request, pinned: j.fixed[i]}
		}
	}
}

func workerOf(s *appsv1.StatefulSet, i int) worker {
	return worker{namespace: s.Namespace, job: s.Labels[handoff.JobNameLabel], set: s.Name, index: i}
}

// boundWorkerOf is the worker a pod the scheduler bound is, when it is a
// trainfn job's worker and not being deleted.
func boundWorkerOf(p *corev1.Pod) (worker, bool) {
	i, ok := podIndex(p)
	if !ok || jobKeyOf(p) == "" || p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
		return worker{}, false
	}
	job := p.Labels[handoff.JobNameLabel]
	return worker{namespace: p.Namespace, job: job, set: handoff.WorkersName(job), index: i}, true
}

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
		node := pinnedTo(p)
		if node == "" || p.DeletionTimestamp != nil || slices.ContainsFunc(p.Spec.SchedulingGates, isAllocationGate) {
			continue
		}
		if a.Usable(ctx, j.set, node) && !unschedulableFor(p, a.Now(), wait) {
			continue
		}
		// Unchanged since read: a pod bound meanwhile runs, and stays.
		if err := a.Client.Delete(ctx, p, client.Preconditions{UID: &p.UID, ResourceVersion: &p.ResourceVersion}); err != nil {
			if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				log.FromContext(ctx).Error(err, "replacing a pod stuck on its node", "pod", p.Name, "node", node)
			}
			continue
		}
		if idx, ok := podIndex(p); ok {
			// Placed anew against the room as it is, not pinned back.
			delete(a.reserved, workerOf(j.set, idx))
		}
		a.Recorder.Eventf(j.set, nil, corev1.EventTypeWarning, "Replaced", "Allocate", "pod %s could not run on %s, the node it was pinned to: it is made again and placed anew", p.Name, node)
		if idx, ok := podIndex(p); ok && idx < len(j.prev) {
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
		if idx, ok := podIndex(p); ok && fixedNode(p) != "" {
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
		out[i] = fixedNode(p)
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

// preemptibleJobs are the started, running preemptible DIJobs.
func (a *Allocation) preemptibleJobs(ctx context.Context) ([]preemptible, error) {
	var sets appsv1.StatefulSetList
	if err := a.Client.List(ctx, &sets, client.MatchingLabels{handoff.OperatorNameLabel: handoff.Operator}); err != nil {
		return nil, err
	}
	var out []preemptible
	for i := range sets.Items {
		s := &sets.Items[i]
		if !isPreemptible(s) || s.Annotations[handoff.ScaledFrom] == "" || s.Annotations[handoff.Ended] != "" || s.DeletionTimestamp != nil {
			continue
		}
		if _, _, err := bounds(s); err != nil {
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
	recorded, _ := allocationOf(s)
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
		idx, ok := podIndex(pod)
		if !ok || idx >= len(p.prev) {
			continue
		}
		if node := fixedNode(pod); node != "" {
			p.prev[idx], p.fixed[idx] = node, true
		}
		if pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil {
			delete(p.unbound, idx)
		}
	}
	return p, nil
}

func isPreemptible(s *appsv1.StatefulSet) bool {
	_, elastic := s.Annotations[handoff.ElasticWorkers]
	return handoff.IsDIJob(s.Labels) && elastic
}

// jobInfo is what the policy knows of a job's StatefulSet.
func jobInfo(s *appsv1.StatefulSet) allocator.JobInfo {
	b, _, _ := bounds(s)
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
	i, err := strconv.Atoi(p.Labels[appsv1.PodIndexLabel])
	return i, err == nil && i >= 0
}
