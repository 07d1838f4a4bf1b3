// Package diphase records a DIJob's phase on its first workload, where
// Argo CD and people read it: no DIJob object exists in the cluster to
// carry a status.
package diphase

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Rules are the rights Record needs: the trainfn.dev/phase annotation of
// the DIJob's first workload, a Job or a StatefulSet.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"patch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"patch"}},
}

// Record writes a DIJob's phase when it changed; nothing for any other
// job.
func Record(ctx context.Context, w write.Writer, j *observed.Job) error {
	primary := firstWorkload(j)
	if primary == nil {
		return nil
	}
	objs := phase.Objects{Jobs: j.Jobs, StatefulSets: j.StatefulSets, Pods: j.Pods}
	now := phase.Of(phase.Recorded(objs), objs)
	if string(now.Phase) == primary.GetAnnotations()[handoff.Phase] {
		return nil
	}
	log.FromContext(ctx).Info("phase", "job", j.Name, "phase", now.Phase, "reason", now.Reason)
	return w.MergePatch(ctx, primary, map[string]any{"metadata": map[string]any{"annotations": map[string]string{handoff.Phase: string(now.Phase)}}})
}

// firstWorkload is the DIJob workload of first rank 0; nil for any other
// job.
func firstWorkload(j *observed.Job) client.Object {
	for _, w := range j.Workers() {
		if handoff.IsDIJob(w.GetLabels()) && w.GetAnnotations()[handoff.FirstRank] == "0" {
			return w
		}
	}
	return nil
}
