package observed

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// ElasticWorkers are a job's workers whose count is a run-time fact: a
// StatefulSet's replicas, or, under a gang scheduler that resizes only
// Jobs (Kueue), an Indexed Job's parallelism, its completions the indexes
// the workers may have. The render leaves the count out of either. Exactly
// one of Set and Job is set.
type ElasticWorkers struct {
	Set *appsv1.StatefulSet
	Job *batchv1.Job
}

// Elastic is the job's elastic workers, if it has any.
func (j *Job) Elastic() *ElasticWorkers {
	for i := range j.StatefulSets {
		if s := &j.StatefulSets[i]; IsElasticWorkers(s) {
			return &ElasticWorkers{Set: s}
		}
	}
	for i := range j.Jobs {
		if w := &j.Jobs[i]; IsElasticWorkers(w) {
			return &ElasticWorkers{Job: w}
		}
	}
	return nil
}

// IsElasticWorkers tells whether a workload is a job's elastic workers.
func IsElasticWorkers(obj client.Object) bool {
	_, ok := obj.GetAnnotations()[handoff.ElasticWorkers]
	return ok && obj.GetLabels()[handoff.JobRoleLabel] == handoff.RoleWorker
}

// IsPreemptible tells whether a StatefulSet runs a preemptible DIJob's
// workers, whose count and nodes the allocator decides.
func IsPreemptible(s *appsv1.StatefulSet) bool {
	_, elastic := s.Annotations[handoff.ElasticWorkers]
	return handoff.IsDIJob(s.Labels) && elastic
}

// Object is the workload itself.
func (e *ElasticWorkers) Object() client.Object {
	if e.Set != nil {
		return e.Set
	}
	return e.Job
}

// Replicas is how many workers the workload asks for now, with the API's
// defaults: a Job's parallelism as written, which the bounds apply to even
// where its completions cap it.
func (e *ElasticWorkers) Replicas() int32 {
	if e.Set != nil {
		return phase.Replicas(e.Set)
	}
	if p := e.Job.Spec.Parallelism; p != nil {
		return *p
	}
	return 1
}

// Resize is the spec of a merge patch that asks for n workers.
func (e *ElasticWorkers) Resize(n int32) map[string]any {
	if e.Set != nil {
		return map[string]any{"replicas": n}
	}
	return map[string]any{"parallelism": n}
}

// Indexes bounds the workers' indexes that take work: a StatefulSet's
// pods at or above its replicas are being scaled away, and keep running
// until they are; a Job deletes the pods it scales away at once, the
// newest first, which need not be the highest, so any index it may have
// counts.
func (e *ElasticWorkers) Indexes() int32 {
	if e.Set != nil {
		return phase.Replicas(e.Set)
	}
	if c := e.Job.Spec.Completions; c != nil {
		return *c
	}
	return 1 // the API's default completions
}

// Template is the workers' pod template.
func (e *ElasticWorkers) Template() *corev1.PodTemplateSpec {
	if e.Set != nil {
		return &e.Set.Spec.Template
	}
	return &e.Job.Spec.Template
}

// Queued tells whether the workers are a Job its queue holds suspended.
func (e *ElasticWorkers) Queued() bool {
	return e.Job != nil && e.Job.Spec.Suspend != nil && *e.Job.Spec.Suspend
}

// Started tells whether the reconciler has set the workload's first count.
func (e *ElasticWorkers) Started() bool {
	_, ok := e.Object().GetAnnotations()[handoff.ScaledFrom]
	return ok
}

// Preemptible tells whether the workers are a preemptible DIJob's, which
// the allocator places.
func (e *ElasticWorkers) Preemptible() bool { return e.Set != nil && IsPreemptible(e.Set) }

// Allocation reads a preemptible DIJob's StatefulSet's allocation: the
// node chosen for each index, "" for none.
func Allocation(s *appsv1.StatefulSet) (allocator.NodeList, error) {
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
