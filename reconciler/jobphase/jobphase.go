// Package jobphase records a job's phase on its first workload
// (trainfn.dev/phase), where Argo CD, `kubectl get -o yaml` and `trainfn
// status` read it: no MPIJob, PyTorchJob, DIJob or TrainJob object exists
// in the cluster to carry a status. Each change of the recorded phase is
// announced once, as training-operator and mpi-operator announce theirs:
// an event on that workload (reason <Kind><Suffix>, as MPIJobRunning) and
// the job counters (trainfn_jobs_*_total). The phase itself is status/phase's,
// by its rules alone.
//
// The write of a new phase is conditional on the workload read
// (metadata.resourceVersion): of two reconciles that saw the same change,
// from a lagging cache or a replica that was leader a moment ago, only one
// writes it, and only that one emits its events and counts it. A restarted
// reconciler finds the phase recorded and announces nothing again.
package jobphase

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Rules are the rights Record needs: the trainfn.dev/phase annotation of
// the job's first workload, a Job or a StatefulSet. Its events are the
// manager's recorder's.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"patch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"patch"}},
}

// Recorder records jobs' phases and announces their changes.
type Recorder struct {
	Writer   write.Writer
	Recorder recorder.EventRecorder
	Metrics  *Metrics
	Now      func() time.Time
}

// Record writes a job's phase on its first workload when it changed, and
// announces the change. A job whose workloads name no kind (labelled by
// hand) has no reason to announce it under, and is left alone.
func (r *Recorder) Record(ctx context.Context, j *observed.Job) error {
	objs := phase.Objects{Jobs: j.Jobs, StatefulSets: j.StatefulSets, Pods: j.Pods}
	primary := phase.FirstWorkload(objs)
	if primary == nil || j.Kind == "" {
		return nil
	}
	prev := phase.Recorded(objs)
	now := phase.Of(prev, objs)
	if string(now.Phase) == primary.GetAnnotations()[handoff.Phase] {
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{
		"resourceVersion": primary.GetResourceVersion(),
		"annotations":     map[string]string{handoff.Phase: string(now.Phase)},
	}}
	if err := r.Writer.MergePatch(ctx, primary, patch); err != nil {
		// The workload changed or went since the cache read it: its
		// watch event brings the job back, read anew.
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			log.FromContext(ctx).V(1).Info("phase not recorded: the workload changed", "workload", primary.GetName(), "error", err.Error())
			return nil
		}
		return err
	}
	if now.Phase == prev {
		// The record moved to the first workload (one applied after
		// another carried it): no change to announce.
		return nil
	}
	t := Transition{Kind: j.Kind, From: prev, To: now, Resumed: resumed(j.Jobs)}
	log.FromContext(ctx).Info("phase", "from", prev, "to", now.Phase, "reason", now.Reason)
	for _, e := range t.Events() {
		r.Recorder.Eventf(primary, nil, e.Type, e.Reason, "RecordPhase", "%s", e.Message)
	}
	r.Metrics.observe(j.Namespace, t, r.Now().Sub(primary.GetCreationTimestamp().Time))
	return nil
}

// resumed tells whether one of the Jobs was suspended and has been
// resumed: the Job controller then keeps its Suspended condition, False,
// or, until it has seen the change, the condition is still True while
// spec.suspend is not.
func resumed(jobs []batchv1.Job) bool {
	for _, j := range jobs {
		for _, c := range j.Status.Conditions {
			if c.Type != batchv1.JobSuspended {
				continue
			}
			if c.Status == corev1.ConditionFalse || j.Spec.Suspend == nil || !*j.Spec.Suspend {
				return true
			}
		}
	}
	return false
}
