// Package gates lifts the scheduling gates the render puts on pods that
// must wait: a TrainJob's pods that wait for other Jobs of their job
// (its runtime's dependsOn), and a preemptible DIJob's new workers, which
// wait until they are pinned to the node the allocator chose for them.
// Lifting a gate is a patch of the pod's spec.schedulingGates (and, to pin
// it, of its node affinity, which a gated pod may narrow), conditional on
// the pod as read, so that a gate another party added meanwhile is never
// dropped.
package gates

import (
	"context"
	"errors"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Rules are the rights the gates need: patch a gated pod (its gates, its
// node affinity, the trainfn.dev/pinned-at mark).
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"patch"}},
}

// PinningRules are the rights pinning needs besides, with an allocator
// only: record the nodes given out on a preemptible DIJob's StatefulSet,
// read live first so that no other index's node is lost.
var PinningRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "patch"}},
}

// LiftDependencies lets the scheduler place the pods that wait for other
// Jobs of their job once every Job they wait for is as they need it, as
// JobSet creates a dependent's Jobs only then.
func LiftDependencies(ctx context.Context, w write.Writer, j *observed.Job) error {
	var errs []error
	for i := range j.Pods {
		p := &j.Pods[i]
		if p.DeletionTimestamp != nil || !slices.ContainsFunc(p.Spec.SchedulingGates, isDependencyGate) {
			continue
		}
		if !dependenciesMet(j, p.Annotations[handoff.DependsOn]) {
			continue
		}
		err := w.MergePatch(ctx, p, map[string]any{
			"metadata": map[string]any{"resourceVersion": p.ResourceVersion},
			"spec":     map[string]any{"schedulingGates": without(p.Spec.SchedulingGates, isDependencyGate)},
		})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err == nil {
			log.FromContext(ctx).V(1).Info("lifted the dependency gate", "pod", p.Name)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func isDependencyGate(g corev1.PodSchedulingGate) bool { return g.Name == handoff.DependsOnGate }

// without are the gates but those the predicate picks.
func without(gates []corev1.PodSchedulingGate, picked func(corev1.PodSchedulingGate) bool) []corev1.PodSchedulingGate {
	var out []corev1.PodSchedulingGate
	for _, g := range gates {
		if !picked(g) {
			out = append(out, g)
		}
	}
	return out
}

// dependenciesMet tells whether every Job a DependsOn annotation lists is
// as it needs: Ready when each of its pods is ready or done, as JobSet
// counts them; Complete when it succeeded. An annotation it cannot read
// holds the pods, as a Job not yet there does.
func dependenciesMet(j *observed.Job, deps string) bool {
	if deps == "" {
		return false
	}
	for _, d := range strings.Split(deps, ",") {
		name, status, ok := strings.Cut(d, "=")
		if !ok {
			return false
		}
		dep := j.FindJob(name)
		if dep == nil {
			return false
		}
		switch status {
		case "Ready":
			if !ready(dep) {
				return false
			}
		case "Complete":
			if o, _ := phase.JobOutcome(dep); o != phase.Succeeded {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// ready tells whether every pod a Job runs at once is ready or done, as
// JobSet's dependsOn counts it: failed pods too.
func ready(job *batchv1.Job) bool {
	up, want := phase.PodsUp(job)
	return up+job.Status.Failed >= want
}
