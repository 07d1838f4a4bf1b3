// Package scaling keeps an elastic job's worker count: it sets the first
// count once, to the rendered one, keeps later counts, whoever sets them,
// within the job's bounds, and starts a new run when GitOps rolls the
// workers' StatefulSet to another render. Scaling down is the StatefulSet's
// or Job controller's: a StatefulSet removes the highest indexes first,
// never one below the new count; a Job, the newest pods.
package scaling

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

// Rules are the rights the Scaler needs: the count (a StatefulSet's
// spec.replicas, under Kueue a Job's spec.parallelism) and the run's marks
// (trainfn.dev/scaled-from, revision, allocation) on either.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"patch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"patch"}},
}

// Placer chooses nodes for a preemptible DIJob's first workers, by index;
// the allocator does.
type Placer interface {
	Place(ctx context.Context, s *appsv1.StatefulSet, indexes []int) map[int]string
}

// Scaler keeps elastic workers' counts.
type Scaler struct {
	Writer   write.Writer
	Recorder recorder.EventRecorder
	// Scales counts the counts set, by reason.
	Scales *prometheus.CounterVec
	// Placer, when set, places a preemptible DIJob's first workers; nil
	// when no allocator runs.
	Placer Placer
}

// Scale sets elastic workers' first count, once, and keeps later counts
// within the job's bounds.
func (s *Scaler) Scale(ctx context.Context, e *observed.ElasticWorkers) error {
	w := e.Object()
	b, first, err := observed.Bounds(w)
	if err != nil {
		s.Recorder.Eventf(w, nil, corev1.EventTypeWarning, "InvalidAnnotation", "Scale", "%v", err)
		return nil
	}
	var want int32
	var why string
	current := e.Replicas()
	switch {
	case !e.Started() && e.Queued():
		// Kueue admits a Job it holds at the count the API server
		// defaulted; resized before, v0.19 may admit both that count's
		// Workload and the new count's, and keep the smaller. Once the
		// Job is admitted, a resize is a workload slice, which it keeps.
		return nil
	case !e.Started():
		want, why = first, "Started"
	case current < b.Min:
		want, why = b.Min, "BelowMinimum"
	case current > b.Max:
		want, why = b.Max, "AboveMaximum"
	default:
		return nil
	}
	patch := map[string]any{"spec": e.Resize(want)}
	if why == "Started" {
		patch["metadata"] = map[string]any{"annotations": s.startMarks(ctx, e, want)}
	}
	if err := s.Writer.MergePatch(ctx, w, patch); err != nil {
		return err
	}
	s.Scales.WithLabelValues(why).Inc()
	s.Recorder.Eventf(w, nil, corev1.EventTypeNormal, "Scaled", "Scale", "%s: %d workers, within %s", why, want, b)
	log.FromContext(ctx).Info("scaled workers", "workers", w.GetName(), "kind", write.KindOf(w), "reason", why, "from", current, "to", want)
	return nil
}

// startMarks are the annotations that record a run's start: its first
// count, the render it is of, and for a preemptible DIJob the nodes the
// allocator chose for its first workers.
func (s *Scaler) startMarks(ctx context.Context, e *observed.ElasticWorkers, want int32) map[string]string {
	annotations := map[string]string{handoff.ScaledFrom: fmt.Sprint(want)}
	if digest := e.Template().Labels[handoff.DigestLabel]; digest != "" {
		annotations[handoff.Revision] = digest
	}
	if s.Placer == nil || !e.Preemptible() {
		return annotations
	}
	indexes := make([]int, want)
	for i := range indexes {
		indexes[i] = i
	}
	placed := s.Placer.Place(ctx, e.Set, indexes)
	if len(placed) == int(want) {
		list := make([]string, want)
		for i, node := range placed {
			list[i] = node
		}
		annotations[handoff.Allocation] = string(write.MustJSON(list))
	}
	return annotations
}

// clearedRunMarks is a merge patch's annotations that remove what the
// reconciler records on an elastic StatefulSet about one run of its job.
var clearedRunMarks = map[string]any{handoff.ScaledFrom: nil, handoff.Ended: nil, handoff.Allocation: nil, handoff.Revision: nil}

// Renew clears the run marks of an elastic StatefulSet whose template is of
// another render than the run they record: the job changed in Git, its
// Jobs were recreated, and the StatefulSet, which a GitOps tool rolls
// rather than recreates, must start again too, ended or scaled as the old
// run left it. A run started before the reconciler recorded revisions is
// adopted as the current render's, not restarted. Both patches are
// conditional on the StatefulSet read, so a stale cache never clears the
// marks of a run just started.
func (s *Scaler) Renew(ctx context.Context, j *observed.Job) error {
	var errs []error
	for i := range j.StatefulSets {
		set := &j.StatefulSets[i]
		digest := set.Spec.Template.Labels[handoff.DigestLabel]
		from, recorded := set.Annotations[handoff.Revision]
		if _, started := set.Annotations[handoff.ScaledFrom]; !started || digest == "" || from == digest {
			continue
		}
		annotations := clearedRunMarks
		if !recorded {
			annotations = map[string]any{handoff.Revision: digest}
		}
		patch := map[string]any{"metadata": map[string]any{"resourceVersion": set.ResourceVersion, "annotations": annotations}}
		if err := s.Writer.MergePatch(ctx, set, patch); err != nil {
			errs = append(errs, err)
			continue
		}
		if !recorded {
			continue
		}
		s.Recorder.Eventf(set, nil, corev1.EventTypeNormal, "NewRevision", "Renew",
			"the template is of render %s, not of %s: a new run starts", digest, from)
		log.FromContext(ctx).Info("new revision", "statefulSet", set.Name, "from", from, "to", digest)
	}
	return errors.Join(errs...)
}
