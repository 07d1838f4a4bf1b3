// Package allocation runs DI-orchestrator's allocator (package allocator,
// its policy) over the cluster's preemptible DIJobs: on the leader, every
// period, and for the reconciler and its gates when a job starts or a new
// worker waits at its allocation gate.
package allocation

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
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
	// Client reads the cache: StatefulSets, Nodes, the jobs' pods.
	Client client.Reader
	Writer write.Writer
	// Live lists every bound pod straight from the API, a page at a time:
	// the cache holds trainfn's pods only, and the room on a node is
	// everybody's.
	Live client.Reader
	// Namespaces are those the reconciler watches, all when empty. Where
	// its rights reach no further, the allocator counts their pods only,
	// and learns of the room other namespaces' pods take on a node when a
	// pod pinned there cannot be scheduled, and is replaced (stuckAfter).
	Namespaces []string
	Policy     allocator.Policy
	Period     time.Duration
	Recorder   recorder.EventRecorder
	// Scales counts the worker counts it set.
	Scales *prometheus.CounterVec
	// Now tells how long a pinned pod has waited for its node.
	Now func() time.Time

	mu sync.Mutex
	// namespacedOnly is set once listing every namespace's pods was
	// refused.
	namespacedOnly bool
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
	recorded, _ := observed.Allocation(j.set)
	if int32(len(list)) == current && slices.Equal(recorded, list) {
		a.reserve(j, list)
		return true, nil
	}
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": j.set.ResourceVersion,
		"annotations":     map[string]string{handoff.Allocation: string(write.MustJSON(list))},
	}}
	if int32(len(list)) != current {
		patch["spec"] = map[string]any{"replicas": len(list)}
	}
	if err := a.Writer.MergePatch(ctx, j.set, patch); err != nil {
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return false, err
	}
	// Reserved once recorded: until then, the reservations stand for what
	// the pods are being pinned to.
	a.reserve(j, list)
	if int32(len(list)) != current {
		a.Scales.WithLabelValues("Allocated").Inc()
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
	i, ok := observed.PodIndex(p)
	if !ok || jobKeyOf(p) == "" || p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
		return worker{}, false
	}
	job := p.Labels[handoff.JobNameLabel]
	return worker{namespace: p.Namespace, job: job, set: handoff.WorkersName(job), index: i}, true
}

// Rules are the rights the allocator needs where it places workers: it
// lists the pods bound to nodes (live, every namespace's it may read) and
// the StatefulSets of the jobs it holds room for, writes a job's worker
// count and allocation on its StatefulSet, and deletes a worker's pod that
// waits for good on its node.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "delete"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"list", "patch"}},
}

// NodeRules are the rights the allocator needs cluster-wide, whatever the
// reconciler watches: every Node's room, readiness, cordon and taints, from
// the cache. Nodes belong to no namespace.
var NodeRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list", "watch"}},
}

// EveryNamespaceRules let an allocator whose reconciler watches some
// namespaces count the pods of every namespace on the nodes, as it does
// when every namespace is watched (eachBoundPod).
var EveryNamespaceRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
}
