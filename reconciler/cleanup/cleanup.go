// Package cleanup stops a job's workers once the job has ended, as its
// runPolicy.cleanPodPolicy says: it suspends the workers' Job (or, under
// Kueue, resizes an elastic one to zero), scales their StatefulSet to
// zero, and deletes finished worker pods; and it marks the workers with
// how the job ended. The objects themselves stay, as GitOps applied them.
package cleanup

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Rules are the rights Stop needs: patch the workers' Job (spec.suspend,
// or spec.parallelism under Kueue) or StatefulSet (spec.replicas) and the
// trainfn.dev/ended mark on either; delete the finished worker pods
// (cleanPodPolicy All).
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"patch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"patch"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"delete"}},
}

// selfEndGrace is how long the workers of an MPIJob, which stop by
// themselves when its launcher tells them the job ended, have to do so
// before the reconciler stops them: the word can be lost (no worker could
// be reached, or the worker that counted the launcher's failures was made
// again and counts from zero).
const selfEndGrace = 30 * time.Second

// Cleaner stops the workers of ended jobs.
type Cleaner struct {
	Writer   write.Writer
	Recorder recorder.EventRecorder
	// CleanUps counts the jobs whose workers it stopped, by policy.
	CleanUps *prometheus.CounterVec
	// Now is the clock the workers' grace to end by themselves runs on.
	Now func() time.Time
}

// Stop stops the workers of a job that has ended, and reports whether it
// ended, and how long to wait before looking again at workers that should
// stop by themselves (0: no need).
func (c *Cleaner) Stop(ctx context.Context, j *observed.Job) (ended bool, again time.Duration, err error) {
	var errs []error
	for _, w := range j.Workers() {
		done, wait, err := c.stop(ctx, j, w)
		errs = append(errs, err)
		ended = ended || done
		if wait > 0 && (again == 0 || wait < again) {
			again = wait
		}
	}
	return ended, again, errors.Join(errs...)
}

func (c *Cleaner) stop(ctx context.Context, j *observed.Job, workers client.Object) (bool, time.Duration, error) {
	how := j.Ended(workers)
	if how == "" {
		return false, 0, nil
	}
	policy := workers.GetAnnotations()[handoff.CleanPodPolicy]
	mark := map[string]any{"annotations": map[string]string{handoff.Ended: string(how)}}
	switch w := workers.(type) {
	case *appsv1.StatefulSet:
		return true, 0, c.stopStatefulSet(ctx, w, how, policy, mark)
	case *batchv1.Job:
		return c.stopJob(ctx, j, w, how, policy, mark)
	}
	return true, 0, nil
}

// stopStatefulSet scales a StatefulSet's workers to zero. A StatefulSet
// would restart agents that exited, so a job that ends by its workers'
// exit stops them whatever the policy.
func (c *Cleaner) stopStatefulSet(ctx context.Context, w *appsv1.StatefulSet, how phase.Phase, policy string, mark map[string]any) error {
	endsBy, _, _ := handoff.ParseEndsWith(w.Annotations[handoff.EndsWith])
	stop := policy == "Running" || policy == "All" || endsBy == handoff.EndsWithContainerKind
	if !stop || phase.Replicas(w) == 0 {
		return c.markEnded(ctx, w, mark)
	}
	if err := c.Writer.MergePatch(ctx, w, map[string]any{"metadata": mark, "spec": map[string]any{"replicas": 0}}); err != nil {
		return err
	}
	c.cleanedUp(ctx, w, how, policy)
	return nil
}

// stopJob stops a workers' Job, and reports, as stop does, how long to
// wait for workers that stop by themselves.
func (c *Cleaner) stopJob(ctx context.Context, j *observed.Job, w *batchv1.Job, how phase.Phase, policy string, mark map[string]any) (bool, time.Duration, error) {
	endsBy, endsName, _ := handoff.ParseEndsWith(w.Annotations[handoff.EndsWith])
	switch {
	case policy != "Running" && policy != "All":
		// The workers run on, as the policy asks; the mark still records
		// that the job ended, as on a StatefulSet.
		return true, 0, c.markEnded(ctx, w, mark)
	case w.Spec.SuccessPolicy != nil && endsBy == handoff.EndsWithContainerKind:
		// A worker that succeeded ended the job, and their Job's
		// successPolicy ends it and stops the rest.
		return true, 0, c.markEnded(ctx, w, mark)
	}
	if left := selfEndGrace - j.EndedFor(endsName, c.Now()); stopsItself(w) && left > 0 {
		// The launcher tells the workers the job ended, and their Job ends
		// at its first success and stops the rest: nothing to write yet,
		// unless they are still running by then.
		return true, left, c.markEnded(ctx, w, mark)
	}
	if ended, _ := phase.JobOutcome(w); ended == "" && !halted(w) {
		// Suspending deletes the Job's running pods and keeps it from
		// making more; the Job itself stays, as GitOps applied it. A Job
		// that ended by itself has nothing left to stop. Kueue resumes a
		// Job it admitted that is suspended, again and again; it follows
		// a Job it resizes to zero workers, and frees their quota.
		stop := map[string]any{"suspend": true}
		if resizedByKueue(w) {
			stop = map[string]any{"parallelism": 0}
		}
		if err := c.Writer.MergePatch(ctx, w, map[string]any{"metadata": mark, "spec": stop}); err != nil {
			return true, 0, err
		}
		c.cleanedUp(ctx, w, how, policy)
	}
	if policy == "All" {
		return true, 0, c.deleteFinishedWorkers(ctx, j, w)
	}
	return true, 0, nil
}

// markEnded records on workers that their job ended, once.
func (c *Cleaner) markEnded(ctx context.Context, w client.Object, mark map[string]any) error {
	if w.GetAnnotations()[handoff.Ended] != "" {
		return nil
	}
	return c.Writer.MergePatch(ctx, w, map[string]any{"metadata": mark})
}

// kueueQueueLabel queues a Job for Kueue, which then manages it whole.
const kueueQueueLabel = "kueue.x-k8s.io/queue-name"

// resizedByKueue tells whether a Job is elastic workers Kueue manages and
// resizes. A job of a fixed size is queued as a pod group instead, whose
// Jobs Kueue leaves alone.
func resizedByKueue(w *batchv1.Job) bool {
	return w.Labels[kueueQueueLabel] != "" && observed.IsElasticWorkers(w)
}

// halted tells whether a workers' Job was stopped: suspended, or, if Kueue
// resizes it, at zero workers.
func halted(w *batchv1.Job) bool {
	if resizedByKueue(w) {
		return w.Spec.Parallelism != nil && *w.Spec.Parallelism == 0
	}
	return w.Spec.Suspend != nil && *w.Spec.Suspend
}

// stopsItself tells whether a workers' Job stops when its launcher tells
// it the job ended: an MPIJob's, which the render gives a successPolicy
// only then.
func stopsItself(w *batchv1.Job) bool {
	return w.Spec.SuccessPolicy != nil && w.Labels[handoff.KindLabel] == handoff.MPIJobKind
}

func (c *Cleaner) cleanedUp(ctx context.Context, workers client.Object, how phase.Phase, policy string) {
	c.CleanUps.WithLabelValues(policy).Inc()
	c.Recorder.Eventf(workers, nil, corev1.EventTypeNormal, "CleanedUp", "Stop",
		"the job %s: its workers are stopped (cleanPodPolicy %s)", map[phase.Phase]string{phase.Succeeded: "succeeded", phase.Failed: "failed"}[how], policy)
	log.FromContext(ctx).Info("stopped the workers of an ended job", "workers", workers.GetName(), "outcome", how, "cleanPodPolicy", policy)
}

// deleteFinishedWorkers removes the worker pods a suspended Job leaves:
// those that had already finished.
func (c *Cleaner) deleteFinishedWorkers(ctx context.Context, j *observed.Job, w *batchv1.Job) error {
	var errs []error
	for _, p := range j.PodsOf(handoff.RoleWorker) {
		if !observed.Finished(&p) || p.DeletionTimestamp != nil || !metav1.IsControlledBy(&p, w) {
			continue
		}
		if err := c.Writer.Delete(ctx, &p, client.Preconditions{UID: &p.UID}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
