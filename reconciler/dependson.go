package reconciler

import (
	"context"
	"errors"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// liftDependencyGates lets the scheduler place the pods that wait for
// other Jobs of their job (a TrainJob's replicated jobs ordered by its
// runtime's dependsOn) once every Job they wait for is as they need it, as
// JobSet creates a dependent's Jobs only then.
func (r *Reconciler) liftDependencyGates(ctx context.Context, j *job) error {
	var errs []error
	for i := range j.pods {
		p := &j.pods[i]
		if p.DeletionTimestamp != nil || !slices.ContainsFunc(p.Spec.SchedulingGates, isDependencyGate) {
			continue
		}
		if !j.dependenciesMet(p.Annotations[handoff.DependsOn]) {
			continue
		}
		var gates []corev1.PodSchedulingGate
		for _, g := range p.Spec.SchedulingGates {
			if !isDependencyGate(g) {
				gates = append(gates, g)
			}
		}
		// The resourceVersion makes the patch fail rather than drop a gate
		// another party added meanwhile.
		err := r.mergePatch(ctx, p, map[string]any{
			"metadata": map[string]any{"resourceVersion": p.ResourceVersion},
			"spec":     map[string]any{"schedulingGates": gates},
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

// dependenciesMet tells whether every Job a DependsOn annotation lists is
// as it needs: Ready when each of its pods is ready or done, as JobSet
// counts them; Complete when it succeeded. An annotation it cannot read
// holds the pods, as a Job not yet there does.
func (j *job) dependenciesMet(deps string) bool {
	if deps == "" {
		return false
	}
	for _, d := range strings.Split(deps, ",") {
		name, status, ok := strings.Cut(d, "=")
		if !ok {
			return false
		}
		dep := j.findJob(name)
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
