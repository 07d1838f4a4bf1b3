package reconciler

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// recordPhase writes a DIJob's phase on its first workload, where Argo CD
// and people read it (no DIJob object exists to carry a status), when the
// phase changed.
func (r *Reconciler) recordPhase(ctx context.Context, j *job) error {
	primary := j.firstDIWorkload()
	if primary == nil {
		return nil
	}
	objs := phase.Objects{Jobs: j.jobs, StatefulSets: j.statefulSets, Pods: j.pods}
	now := phase.Of(phase.Recorded(objs), objs)
	if string(now.Phase) == primary.GetAnnotations()[handoff.Phase] {
		return nil
	}
	log.FromContext(ctx).Info("phase", "job", j.name, "phase", now.Phase, "reason", now.Reason)
	return r.mergePatch(ctx, primary, map[string]any{"metadata": map[string]any{"annotations": map[string]string{handoff.Phase: string(now.Phase)}}})
}

// firstDIWorkload is the DIJob workload of first rank 0; nil for any
// other job.
func (j *job) firstDIWorkload() client.Object {
	for _, w := range j.workers() {
		if handoff.IsDIJob(w.GetLabels()) && w.GetAnnotations()[handoff.FirstRank] == "0" {
			return w
		}
	}
	return nil
}
