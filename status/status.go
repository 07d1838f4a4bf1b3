// Package status finds the jobs trainfn rendered in a cluster and tells
// each one's phase, for `trainfn status`. No job object exists to list:
// a job is the Jobs, StatefulSets and pods that carry trainfn's operator
// label and the same job-name and job-kind labels in one namespace. The
// phase is derived from those live objects by package phase, the
// reconciler's own rules; the phase the reconciler recorded
// (trainfn.dev/phase) is only the previous phase the derivation starts
// from, so that the status is right even when no reconciler runs, or it
// lags.
package status

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Job is one trainfn job and its phase.
type Job struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Kind is the job spec's kind, as KindOf infers it.
	Kind string `json:"kind"`
	// Created is when its first workload was created.
	Created metav1.Time `json:"created"`
	// Recorded is the phase the reconciler last recorded, if any.
	Recorded phase.Phase `json:"recordedPhase,omitempty"`
	phase.Summary
	// JobsStatus, for a TrainJob, counts the Jobs of each replicated job
	// by state, as Trainer's status.jobsStatus does.
	JobsStatus []JobStatus `json:"jobsStatus,omitempty"`
	// Conditions are the operators' (see conditionsOf), in the order
	// they come about.
	Conditions []Condition `json:"conditions,omitempty"`
	// StartTime is when the job's first pod started; CompletionTime when
	// the job ended. Each is left out while unknown.
	StartTime      *metav1.Time `json:"startTime,omitempty"`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// ReplicaStatuses count the job's pods by role.
	ReplicaStatuses map[string]ReplicaStatus `json:"replicaStatuses,omitempty"`
	// TrainerStatus is the progress the job's pods last reported.
	TrainerStatus *TrainerStatus `json:"trainerStatus,omitempty"`
	// lastFailure is why the job last failed, in a word, for the wide
	// table's REASON; it is in the conditions and the pods already.
	lastFailure string
}

// NotFoundError says that no workload of a job exists.
type NotFoundError struct{ Namespace, Name string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("job %q not found in namespace %q: no Job or StatefulSet carries the labels %s=%s, %s=%s",
		e.Name, e.Namespace, handoff.JobNameLabel, e.Name, handoff.OperatorNameLabel, handoff.Operator)
}

// Lister lists the objects jobs are made of, in a namespace or, when
// namespace is "", in all of them, that carry every label of selector.
type Lister interface {
	ListJobs(ctx context.Context, namespace string, selector map[string]string) ([]batchv1.Job, error)
	ListStatefulSets(ctx context.Context, namespace string, selector map[string]string) ([]appsv1.StatefulSet, error)
	ListPods(ctx context.Context, namespace string, selector map[string]string) ([]corev1.Pod, error)
}

// List finds every trainfn job of a namespace, or of all namespaces when
// namespace is "", in the order of their namespaces and names. A job
// counts while it has a workload: pods left without one are not listed.
func List(ctx context.Context, c Lister, namespace string) ([]Job, error) {
	return find(ctx, c, namespace, map[string]string{handoff.OperatorNameLabel: handoff.Operator})
}

// Get finds one job by its name, or by KIND/NAME (pytorchjob/train, the
// kind in any case, as kubectl takes it) where jobs of two kinds share the
// name, as a PyTorchJob and the TrainJob it moves to do. The error is a
// *NotFoundError when no workload of it exists, an *AmbiguousError when a
// bare name is more than one job's.
func Get(ctx context.Context, c Lister, namespace, ref string) (Job, error) {
	kind, name, byKind := strings.Cut(ref, "/")
	if !byKind {
		kind, name = "", ref
	}
	jobs, err := find(ctx, c, namespace, handoff.JobLabels(name))
	if err != nil {
		return Job{}, err
	}
	if byKind {
		jobs = slices.DeleteFunc(jobs, func(j Job) bool { return !strings.EqualFold(j.Kind, kind) })
	}
	switch len(jobs) {
	case 0:
		return Job{}, &NotFoundError{Namespace: namespace, Name: ref}
	case 1:
		return jobs[0], nil
	}
	kinds := make([]string, len(jobs))
	for i, j := range jobs {
		kinds[i] = j.Kind
	}
	return Job{}, &AmbiguousError{Namespace: namespace, Name: name, Kinds: kinds}
}

// AmbiguousError says that jobs of several kinds share the name asked for.
type AmbiguousError struct {
	Namespace, Name string
	Kinds           []string
}

func (e *AmbiguousError) Error() string {
	refs := make([]string, len(e.Kinds))
	for i, k := range e.Kinds {
		refs[i] = strings.ToLower(k) + "/" + e.Name
	}
	return fmt.Sprintf("%d jobs are named %q in namespace %q, of the kinds %s: name one as %s",
		len(e.Kinds), e.Name, e.Namespace, strings.Join(e.Kinds, ", "), strings.Join(refs, " or "))
}

// find lists the workloads and pods that match the labels, and makes a Job
// of each group of them that shares a namespace, a job name and the kind
// label: a PyTorchJob and a TrainJob of one name are two jobs.
func find(ctx context.Context, c Lister, namespace string, selector map[string]string) ([]Job, error) {
	jobs, err := c.ListJobs(ctx, namespace, selector)
	if err != nil {
		return nil, fmt.Errorf("listing Jobs %s: %w", where(namespace), err)
	}
	sets, err := c.ListStatefulSets(ctx, namespace, selector)
	if err != nil {
		return nil, fmt.Errorf("listing StatefulSets %s: %w", where(namespace), err)
	}
	pods, err := c.ListPods(ctx, namespace, selector)
	if err != nil {
		return nil, fmt.Errorf("listing pods %s: %w", where(namespace), err)
	}
	type key struct{ namespace, name, kind string }
	groups := map[key]*phase.Objects{}
	// A pod rendered before pods carried their job's kind joins its
	// workload's group.
	byWorkload := map[types.UID]key{}
	group := func(obj metav1.Object) *phase.Objects {
		name, ok := obj.GetLabels()[handoff.JobNameLabel]
		if !ok {
			return nil
		}
		k := key{obj.GetNamespace(), name, obj.GetLabels()[handoff.KindLabel]}
		if _, labelled := obj.GetLabels()[handoff.KindLabel]; !labelled {
			if owner := metav1.GetControllerOf(obj); owner != nil {
				if w, ok := byWorkload[owner.UID]; ok {
					k = w
				}
			}
		}
		byWorkload[obj.GetUID()] = k
		if groups[k] == nil {
			groups[k] = &phase.Objects{}
		}
		return groups[k]
	}
	for _, j := range jobs {
		if g := group(&j); g != nil {
			g.Jobs = append(g.Jobs, j)
		}
	}
	for _, s := range sets {
		if g := group(&s); g != nil {
			g.StatefulSets = append(g.StatefulSets, s)
		}
	}
	for _, p := range pods {
		if g := group(&p); g != nil {
			g.Pods = append(g.Pods, p)
		}
	}
	out := []Job{} // an empty list, not null, in JSON
	for k, objs := range groups {
		if len(objs.Jobs) == 0 && len(objs.StatefulSets) == 0 {
			continue
		}
		out = append(out, jobOf(k.namespace, k.name, *objs))
	}
	slices.SortFunc(out, func(a, b Job) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
	})
	return out, nil
}

// jobOf tells a job's phase and status from its objects.
func jobOf(namespace, name string, objs phase.Objects) Job {
	recorded := phase.Recorded(objs)
	j := Job{
		Namespace: namespace, Name: name,
		Kind:            KindOf(objs),
		Created:         created(objs),
		Recorded:        recorded,
		Summary:         phase.Of(recorded, objs),
		JobsStatus:      jobsStatus(objs.Jobs),
		StartTime:       startTime(objs),
		ReplicaStatuses: replicaStatuses(objs),
		TrainerStatus:   trainerStatusOf(objs),
	}
	ending, ended := phase.EndOf(objs)
	if ended && !ending.At.IsZero() {
		j.CompletionTime = &ending.At
	}
	j.Conditions = conditionsOf(j, ending, ended, objs)
	j.lastFailure = lastFailure(j.Conditions, objs)
	return j
}

// created is when the job's first workload was created.
func created(objs phase.Objects) metav1.Time {
	var first metav1.Time
	note := func(t metav1.Time) {
		if first.IsZero() || t.Before(&first) {
			first = t
		}
	}
	for _, j := range objs.Jobs {
		note(j.CreationTimestamp)
	}
	for _, s := range objs.StatefulSets {
		note(s.CreationTimestamp)
	}
	return first
}

// where names a namespace, or all of them, for a message.
func where(namespace string) string {
	if namespace == "" {
		return "in all namespaces"
	}
	return fmt.Sprintf("in namespace %q", namespace)
}
