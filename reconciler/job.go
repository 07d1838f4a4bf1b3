package reconciler

import (
	"fmt"
	"math"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// job is one rendered job as it lives in the cluster: every object and pod
// that carries its name label.
type job struct {
	namespace, name string
	jobs            []batchv1.Job
	statefulSets    []appsv1.StatefulSet
	pods            []corev1.Pod
	config          *corev1.ConfigMap
}

// workers are the job's workers' workloads: one StatefulSet or Job, or one
// Job per worker; for a DIJob, every workload, one per task.
func (j *job) workers() []client.Object {
	var out []client.Object
	for i := range j.statefulSets {
		if isWorkers(&j.statefulSets[i]) {
			out = append(out, &j.statefulSets[i])
		}
	}
	for i := range j.jobs {
		if isWorkers(&j.jobs[i]) {
			out = append(out, &j.jobs[i])
		}
	}
	return out
}

func isWorkers(obj client.Object) bool {
	return handoff.IsDIJob(obj.GetLabels()) || obj.GetLabels()[handoff.JobRoleLabel] == handoff.RoleWorker
}

// elasticWorkers are a job's workers whose count is a run-time fact: a
// StatefulSet's replicas, or, under a gang scheduler that resizes only
// Jobs (Kueue), an Indexed Job's parallelism, its completions the indexes
// the workers may have. The render leaves the count out of either. Exactly
// one of set and job is set.
type elasticWorkers struct {
	set *appsv1.StatefulSet
	job *batchv1.Job
}

// elastic is the job's elastic workers, if it has any.
func (j *job) elastic() *elasticWorkers {
	for i := range j.statefulSets {
		if s := &j.statefulSets[i]; isElasticWorkers(s) {
			return &elasticWorkers{set: s}
		}
	}
	for i := range j.jobs {
		if w := &j.jobs[i]; isElasticWorkers(w) {
			return &elasticWorkers{job: w}
		}
	}
	return nil
}

func isElasticWorkers(obj client.Object) bool {
	_, ok := obj.GetAnnotations()[handoff.ElasticWorkers]
	return ok && obj.GetLabels()[handoff.JobRoleLabel] == handoff.RoleWorker
}

// object is the workload itself.
func (e *elasticWorkers) object() client.Object {
	if e.set != nil {
		return e.set
	}
	return e.job
}

// replicas is how many workers the workload asks for now, with the API's
// defaults: a Job's parallelism as written, which the bounds apply to even
// where its completions cap it.
func (e *elasticWorkers) replicas() int32 {
	if e.set != nil {
		return phase.Replicas(e.set)
	}
	if p := e.job.Spec.Parallelism; p != nil {
		return *p
	}
	return 1
}

// resize is the spec of a merge patch that asks for n workers.
func (e *elasticWorkers) resize(n int32) map[string]any {
	if e.set != nil {
		return map[string]any{"replicas": n}
	}
	return map[string]any{"parallelism": n}
}

// indexes bounds the workers' indexes that take work: a StatefulSet's
// pods at or above its replicas are being scaled away, and keep running
// until they are; a Job deletes the pods it scales away at once, the
// newest first, which need not be the highest, so any index it may have
// counts.
func (e *elasticWorkers) indexes() int32 {
	if e.set != nil {
		return phase.Replicas(e.set)
	}
	if c := e.job.Spec.Completions; c != nil {
		return *c
	}
	return 1 // the API's default completions
}

// template is the workers' pod template.
func (e *elasticWorkers) template() *corev1.PodTemplateSpec {
	if e.set != nil {
		return &e.set.Spec.Template
	}
	return &e.job.Spec.Template
}

// queued tells whether the workers are a Job its queue holds suspended.
func (e *elasticWorkers) queued() bool {
	return e.job != nil && e.job.Spec.Suspend != nil && *e.job.Spec.Suspend
}

// started tells whether the reconciler has set the workload's first count.
func (e *elasticWorkers) started() bool {
	_, ok := e.object().GetAnnotations()[handoff.ScaledFrom]
	return ok
}

// preemptible tells whether the workers are a preemptible DIJob's, which
// the allocator places.
func (e *elasticWorkers) preemptible() bool { return e.set != nil && isPreemptible(e.set) }

func (j *job) podsOf(role string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range j.pods {
		if handoff.PodRole(p.Labels) == role {
			out = append(out, p)
		}
	}
	return out
}

// launcher is the launcher's running pod, if any: the newest not finished.
func (j *job) launcher() *corev1.Pod {
	var found *corev1.Pod
	for i := range j.pods {
		p := &j.pods[i]
		if handoff.PodRole(p.Labels) != handoff.RoleLauncher || finished(p) || p.DeletionTimestamp != nil {
			continue
		}
		if found == nil || p.CreationTimestamp.After(found.CreationTimestamp.Time) {
			found = p
		}
	}
	return found
}

func (j *job) findJob(name string) *batchv1.Job {
	for i := range j.jobs {
		if j.jobs[i].Name == name {
			return &j.jobs[i]
		}
	}
	return nil
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// ended tells whether and how the job a workers' workload belongs to ended,
// by what its EndsWith annotation names: phase.Succeeded or phase.Failed,
// or "" while it runs.
func (j *job) ended(workers client.Object) phase.Phase {
	if o := phase.Phase(workers.GetAnnotations()[handoff.Ended]); o != "" {
		return o
	}
	kind, name, ok := handoff.ParseEndsWith(workers.GetAnnotations()[handoff.EndsWith])
	if !ok {
		if handoff.IsDIJob(workers.GetLabels()) {
			return j.diOutcome()
		}
		return ""
	}
	switch kind {
	case handoff.EndsWithJobKind:
		if leader := j.findJob(name); leader != nil {
			o, _ := phase.JobOutcome(leader)
			return o
		}
	case handoff.EndsWithContainerKind:
		count := int32(-1)
		if s, ok := workers.(*appsv1.StatefulSet); ok {
			count = phase.Replicas(s)
		}
		for _, p := range j.podsOf(handoff.RoleWorker) {
			if phase.Finished(&p, name, count) {
				return phase.Succeeded
			}
		}
	}
	return ""
}

// endedFor is how long ago the Job that ends the job, named, ended; 0
// when it has not, or says not when. Asked once the job is known to have
// ended, a Job that is gone (its ttlSecondsAfterFinished) ended long ago.
func (j *job) endedFor(name string, now time.Time) time.Duration {
	leader := j.findJob(name)
	if leader == nil {
		return math.MaxInt64
	}
	if _, c := phase.JobOutcome(leader); c != nil && !c.LastTransitionTime.IsZero() {
		return now.Sub(c.LastTransitionTime.Time)
	}
	return 0
}

// diOutcome is how a DIJob whose workers run as Jobs ended: as
// DI-orchestrator has it, it failed when one of them failed, and succeeded
// when all of them did.
func (j *job) diOutcome() phase.Phase {
	all, done := 0, 0
	for i := range j.jobs {
		if !handoff.IsDIJob(j.jobs[i].Labels) {
			continue
		}
		all++
		switch o, _ := phase.JobOutcome(&j.jobs[i]); o {
		case phase.Failed:
			return phase.Failed
		case phase.Succeeded:
			done++
		}
	}
	if all > 0 && done == all {
		return phase.Succeeded
	}
	return ""
}

// bounds reads elastic workers' bounds and first count.
func bounds(obj client.Object) (handoff.Bounds, int32, error) {
	a := obj.GetAnnotations()
	b, err := handoff.ParseBounds(a[handoff.ElasticWorkers])
	if err != nil {
		return b, 0, fmt.Errorf("annotation %s: %w", handoff.ElasticWorkers, err)
	}
	first, err := strconv.ParseInt(a[handoff.Workers], 10, 32)
	if err != nil || first < int64(b.Min) || first > int64(b.Max) {
		return b, 0, fmt.Errorf("annotation %s: %q is not a count within %s", handoff.Workers, a[handoff.Workers], b)
	}
	return b, int32(first), nil
}

// slots reads a count of slots from an annotation, and whether the object
// has it.
func slots(obj client.Object, key string) (n int32, ok bool, err error) {
	v, ok := obj.GetAnnotations()[key]
	if !ok {
		return 0, false, nil
	}
	n, err = handoff.ParseSlots(v)
	if err != nil {
		return 0, true, fmt.Errorf("annotation %s: %w", key, err)
	}
	return n, true, nil
}
