// Package observed is what the reconciler knows of one rendered job: every
// object and pod that carries its name label, read from the label-filtered
// cache, and what the render's annotations on them say (package handoff).
// Every concern of the reconciler reads a job through it; none writes
// through it.
package observed

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Job is one rendered job as it lives in the cluster.
type Job struct {
	Namespace, Name string
	// Kind is the kind of job spec it was rendered from.
	Kind         string
	Jobs         []batchv1.Job
	StatefulSets []appsv1.StatefulSet
	Pods         []corev1.Pod
	// Config is the job's <job>-config ConfigMap; nil until it is applied.
	Config *corev1.ConfigMap
}

// Load reads a job's objects from r, the cache. Its ConfigMap is found by
// name, which jobs of two kinds cannot share. A pod rendered before pods
// carried their job's kind is the job's when one of its workloads
// controls it.
func Load(ctx context.Context, r client.Reader, key Key) (*Job, error) {
	j := &Job{Namespace: key.Namespace, Name: key.Name, Kind: key.Kind}
	selector, err := key.Selector()
	if err != nil {
		return nil, err
	}
	ofKind := []client.ListOption{client.InNamespace(key.Namespace), client.MatchingLabelsSelector{Selector: selector}}
	var jobs batchv1.JobList
	var sets appsv1.StatefulSetList
	for _, list := range []client.ObjectList{&jobs, &sets} {
		if err := r.List(ctx, list, ofKind...); err != nil {
			return nil, err
		}
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(key.Namespace), client.MatchingLabels(handoff.JobLabels(key.Name))); err != nil {
		return nil, err
	}
	j.Jobs, j.StatefulSets = jobs.Items, sets.Items
	owners := map[types.UID]bool{}
	for i := range jobs.Items {
		owners[jobs.Items[i].UID] = true
	}
	for i := range sets.Items {
		owners[sets.Items[i].UID] = true
	}
	for _, p := range pods.Items {
		kind, labelled := p.Labels[handoff.KindLabel]
		if labelled && kind == key.Kind || !labelled && controlledBy(&p, owners) {
			j.Pods = append(j.Pods, p)
		}
	}
	var cm corev1.ConfigMap
	switch err := r.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: handoff.ConfigMapName(key.Name)}, &cm); {
	case err == nil:
		j.Config = &cm
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	return j, nil
}

// controlledBy tells whether one of owners controls the pod.
func controlledBy(p *corev1.Pod, owners map[types.UID]bool) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && owners[ref.UID]
}

// Workers are the job's workers' workloads: one StatefulSet or Job, or one
// Job per worker; for a DIJob, every workload, one per task.
func (j *Job) Workers() []client.Object {
	var out []client.Object
	for i := range j.StatefulSets {
		if isWorkers(&j.StatefulSets[i]) {
			out = append(out, &j.StatefulSets[i])
		}
	}
	for i := range j.Jobs {
		if isWorkers(&j.Jobs[i]) {
			out = append(out, &j.Jobs[i])
		}
	}
	return out
}

func isWorkers(obj client.Object) bool {
	return handoff.IsDIJob(obj.GetLabels()) || obj.GetLabels()[handoff.JobRoleLabel] == handoff.RoleWorker
}

// PodsOf are the job's pods of a role.
func (j *Job) PodsOf(role string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range j.Pods {
		if handoff.PodRole(p.Labels) == role {
			out = append(out, p)
		}
	}
	return out
}

// Launcher is the launcher's running pod, if any: the newest not finished.
func (j *Job) Launcher() *corev1.Pod {
	var found *corev1.Pod
	for i := range j.Pods {
		p := &j.Pods[i]
		if handoff.PodRole(p.Labels) != handoff.RoleLauncher || Finished(p) || p.DeletionTimestamp != nil {
			continue
		}
		if found == nil || p.CreationTimestamp.After(found.CreationTimestamp.Time) {
			found = p
		}
	}
	return found
}

// FindJob is the job's Job of that name, if it has one.
func (j *Job) FindJob(name string) *batchv1.Job {
	for i := range j.Jobs {
		if j.Jobs[i].Name == name {
			return &j.Jobs[i]
		}
	}
	return nil
}

// Finished tells whether a pod's containers are done for good.
func Finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// Ended tells whether and how the job a workers' workload belongs to ended,
// by what its EndsWith annotation names: phase.Succeeded or phase.Failed,
// or "" while it runs.
func (j *Job) Ended(workers client.Object) phase.Phase {
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
		if leader := j.FindJob(name); leader != nil {
			o, _ := phase.JobOutcome(leader)
			return o
		}
	case handoff.EndsWithContainerKind:
		count := int32(-1)
		if s, ok := workers.(*appsv1.StatefulSet); ok {
			count = phase.Replicas(s)
		}
		for _, p := range j.PodsOf(handoff.RoleWorker) {
			if phase.Finished(&p, name, count) {
				return phase.Succeeded
			}
		}
	}
	return ""
}

// EndedFor is how long ago the Job that ends the job, named, ended; 0
// when it has not, or says not when. Asked once the job is known to have
// ended, a Job that is gone (its ttlSecondsAfterFinished) ended long ago.
func (j *Job) EndedFor(name string, now time.Time) time.Duration {
	leader := j.FindJob(name)
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
func (j *Job) diOutcome() phase.Phase {
	all, done := 0, 0
	for i := range j.Jobs {
		if !handoff.IsDIJob(j.Jobs[i].Labels) {
			continue
		}
		all++
		switch o, _ := phase.JobOutcome(&j.Jobs[i]); o {
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

// Bounds reads elastic workers' bounds and first count.
func Bounds(obj client.Object) (handoff.Bounds, int32, error) {
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

// Slots reads a count of slots from an annotation, and whether the object
// has it.
func Slots(obj client.Object, key string) (n int32, ok bool, err error) {
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

// PodIndex is a StatefulSet pod's ordinal, from its label.
func PodIndex(p *corev1.Pod) (int, bool) {
	i, err := strconv.Atoi(p.Labels[appsv1.PodIndexLabel])
	return i, err == nil && i >= 0
}
