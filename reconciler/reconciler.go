// Package reconciler is trainfn's in-cluster half: it keeps the run-time
// facts of rendered jobs, and nothing else: GitOps owns every field
// the render writes. It reads
// what a job needs from the annotations the render put on its objects
// (package handoff) and writes only fields the render leaves out:
//
//   - an elastic MPIJob's discovery script, the one ConfigMap key the render
//     omits, kept equal to the workers that can take work now;
//   - an elastic job's worker replicas: set once to the rendered count, then
//     kept within the job's bounds, whoever scales them;
//   - clean-up when a job ends (runPolicy.cleanPodPolicy), by suspending the
//     workers' Job (not one Kueue manages, which it would resume) or
//     scaling their StatefulSet to zero;
//   - the job's SSH Secret, when the user supplied none;
//   - for DIJobs, the phase (on the first workload), the nodes the
//     allocator chose for a preemptible job's workers (pinned on each new
//     pod before its scheduling gate is lifted), and the DI server API,
//     which changes a preemptible job's worker count and keeps its
//     profilings.
package reconciler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/discovery"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// FieldManager is the name the reconciler's writes are recorded under, so
// that managedFields tell them from GitOps' applies.
const FieldManager = handoff.FieldManager

// Reconciler keeps the run-time facts of one job per request; the request's
// name is the job's name.
type Reconciler struct {
	// Client reads from the label-filtered cache and writes to the API.
	Client client.Client
	// Secrets reads Secrets straight from the API: the cache never holds
	// them, so the reconciler neither lists nor watches any.
	Secrets  client.Reader
	Recorder recorder.EventRecorder
	Metrics  *Metrics
	// Now is the clock discovery latency and the workers' grace to end by
	// themselves are measured with.
	Now func() time.Time
	// Allocation places preemptible DIJobs' workers; nil when no
	// allocator runs, and the scheduler places them alone.
	Allocation *Allocation

	// secretsSeen remembers the SSH Secrets found for a set of owners,
	// so that a Secret is looked up once per job, not once per event.
	secretsSeen sync.Map
}

// Reconcile brings one job's run-time facts up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.Metrics.Reconciles.Inc()
	j, err := r.load(ctx, req)
	if err != nil {
		return reconcile.Result{}, err
	}
	var errs []error
	for _, name := range handoff.SSHSecretNames(j.name) {
		errs = append(errs, r.ensureSSHSecret(ctx, j, name))
	}
	errs = append(errs, r.renew(ctx, j))
	errs = append(errs, r.liftDependencyGates(ctx, j))
	ended := false
	var again time.Duration
	for _, w := range j.workers() {
		done, wait, err := r.cleanUp(ctx, j, w)
		errs = append(errs, err)
		ended = ended || done
		if wait > 0 && (again == 0 || wait < again) {
			again = wait
		}
	}
	if e := j.elastic(); e != nil && !ended {
		errs = append(errs, r.scale(ctx, e))
		errs = append(errs, r.discover(ctx, j, e))
		if e.preemptible() {
			errs = append(errs, r.liftGates(ctx, j, e.set))
		}
	}
	errs = append(errs, r.recordPhase(ctx, j))
	return reconcile.Result{RequeueAfter: again}, errors.Join(errs...)
}

// load reads a job's objects from the cache.
func (r *Reconciler) load(ctx context.Context, req reconcile.Request) (*job, error) {
	j := &job{namespace: req.Namespace, name: req.Name}
	in := []client.ListOption{client.InNamespace(req.Namespace), client.MatchingLabels(handoff.JobLabels(req.Name))}
	var jobs batchv1.JobList
	var sets appsv1.StatefulSetList
	var pods corev1.PodList
	for _, list := range []client.ObjectList{&jobs, &sets, &pods} {
		if err := r.Client.List(ctx, list, in...); err != nil {
			return nil, err
		}
	}
	j.jobs, j.statefulSets, j.pods = jobs.Items, sets.Items, pods.Items
	var cm corev1.ConfigMap
	switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: handoff.ConfigMapName(req.Name)}, &cm); {
	case err == nil:
		j.config = &cm
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	return j, nil
}

// clearedRunMarks is a merge patch's annotations that remove what the
// reconciler records on an elastic StatefulSet about one run of its job.
var clearedRunMarks = map[string]any{handoff.ScaledFrom: nil, handoff.Ended: nil, handoff.Allocation: nil, handoff.Revision: nil}

// renew clears the run marks of an elastic StatefulSet whose template is of
// another render than the run they record: the job changed in Git, its
// Jobs were recreated, and the StatefulSet, which a GitOps tool rolls
// rather than recreates, must start again too, ended or scaled as the old
// run left it. A run started before the reconciler recorded revisions is
// adopted as the current render's, not restarted. Both patches are
// conditional on the StatefulSet read, so a stale cache never clears the
// marks of a run just started.
func (r *Reconciler) renew(ctx context.Context, j *job) error {
	var errs []error
	for i := range j.statefulSets {
		s := &j.statefulSets[i]
		digest := s.Spec.Template.Labels[handoff.DigestLabel]
		from, recorded := s.Annotations[handoff.Revision]
		if _, started := s.Annotations[handoff.ScaledFrom]; !started || digest == "" || from == digest {
			continue
		}
		annotations := clearedRunMarks
		if !recorded {
			annotations = map[string]any{handoff.Revision: digest}
		}
		patch := map[string]any{"metadata": map[string]any{"resourceVersion": s.ResourceVersion, "annotations": annotations}}
		if err := r.mergePatch(ctx, s, patch); err != nil {
			errs = append(errs, err)
			continue
		}
		if !recorded {
			continue
		}
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, "NewRevision", "Renew",
			"the template is of render %s, not of %s: a new run starts", digest, from)
		log.FromContext(ctx).Info("new revision", "statefulSet", s.Name, "from", from, "to", digest)
	}
	return errors.Join(errs...)
}

// scale sets elastic workers' first count, once, and keeps later counts
// within the job's bounds. Scaling down is the StatefulSet's or Job
// controller's: a StatefulSet removes the highest indexes first, never one
// below the new count; a Job, the newest pods.
func (r *Reconciler) scale(ctx context.Context, e *elasticWorkers) error {
	w := e.object()
	b, first, err := bounds(w)
	if err != nil {
		r.Recorder.Eventf(w, nil, corev1.EventTypeWarning, "InvalidAnnotation", "Scale", "%v", err)
		return nil
	}
	var want int32
	var why string
	current := e.replicas()
	switch {
	case !e.started() && e.queued():
		// Kueue admits a Job it holds at the count the API server
		// defaulted; resized before, v0.19 may admit both that count's
		// Workload and the new count's, and keep the smaller. Once the
		// Job is admitted, a resize is a workload slice, which it keeps.
		return nil
	case !e.started():
		want, why = first, "Started"
	case current < b.Min:
		want, why = b.Min, "BelowMinimum"
	case current > b.Max:
		want, why = b.Max, "AboveMaximum"
	default:
		return nil
	}
	patch := map[string]any{"spec": e.resize(want)}
	if why == "Started" {
		annotations := map[string]string{handoff.ScaledFrom: fmt.Sprint(want)}
		if digest := e.template().Labels[handoff.DigestLabel]; digest != "" {
			annotations[handoff.Revision] = digest
		}
		if r.Allocation != nil && e.preemptible() {
			placed := r.Allocation.Place(ctx, e.set, indexesBelow(want))
			if len(placed) == int(want) {
				list := make([]string, want)
				for i, node := range placed {
					list[i] = node
				}
				annotations[handoff.Allocation] = string(mustJSON(list))
			}
		}
		patch["metadata"] = map[string]any{"annotations": annotations}
	}
	if err := r.mergePatch(ctx, w, patch); err != nil {
		return err
	}
	r.Metrics.Scales.WithLabelValues(why).Inc()
	r.Recorder.Eventf(w, nil, corev1.EventTypeNormal, "Scaled", "Scale", "%s: %d workers, within %s", why, want, b)
	log.FromContext(ctx).Info("scaled workers", "workers", w.GetName(), "kind", kindOf(w), "reason", why, "from", current, "to", want)
	return nil
}

func indexesBelow(n int32) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// discover writes the job's discovery script when the workers that can take
// work changed, then nudges the launcher's pod so the kubelet refreshes its
// copy at once.
func (r *Reconciler) discover(ctx context.Context, j *job, e *elasticWorkers) error {
	s := e.object()
	perWorker, asked, err := slots(s, handoff.SlotsPerWorker)
	if !asked || j.config == nil {
		// Not an MPIJob (PyTorch needs no discovery), or its ConfigMap is
		// not applied yet: its creation brings the job back.
		return nil
	}
	if err != nil {
		return err
	}
	launcherSlots, launcherWorks, err := slots(s, handoff.LauncherSlots)
	if err != nil {
		return err
	}
	launcher := j.launcher()
	hosts := discovery.Hosts(discovery.Job{
		Workers: j.podsOf(handoff.RoleWorker), Replicas: e.indexes(), SlotsPerWorker: perWorker,
		Launcher: launcher, LauncherWorks: launcherWorks, LauncherSlots: launcherSlots,
	})
	script := discovery.Script(hosts, handoff.DiscoverFormat(s.GetAnnotations()[handoff.DiscoverFormatAnnotation]))
	if current, ok := j.config.Data[handoff.DiscoverHostsKey]; !ok || current != script {
		patch := map[string]any{"data": map[string]string{handoff.DiscoverHostsKey: script}}
		if err := r.mergePatch(ctx, j.config, patch); err != nil {
			return err
		}
		r.Metrics.DiscoveryWrites.Inc()
		now := r.Now()
		listed := discovery.Listed(current)
		for _, h := range hosts {
			if !h.ReadySince.IsZero() && !listed[h.Name] {
				r.Metrics.DiscoveryLatency.Observe(now.Sub(h.ReadySince).Seconds())
			}
		}
		log.FromContext(ctx).Info("wrote discovered hosts", "configMap", j.config.Name, "hosts", len(hosts))
	}
	if launcher == nil {
		return nil
	}
	digest := sha256.Sum256([]byte(script))
	mark := hex.EncodeToString(digest[:8])
	if launcher.Annotations[handoff.DiscoveredHosts] == mark {
		return nil
	}
	// Any change to the pod makes the kubelet sync it, and a sync
	// refreshes its ConfigMap volumes; otherwise the file changes only at
	// the kubelet's next periodic sync, up to a minute or more later.
	err = r.mergePatch(ctx, launcher, map[string]any{"metadata": map[string]any{"annotations": map[string]string{handoff.DiscoveredHosts: mark}}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// selfEndGrace is how long the workers of an MPIJob, which stop by
// themselves when its launcher tells them the job ended, have to do so
// before the reconciler stops them: the word can be lost (no worker could
// be reached, or the worker that counted the launcher's failures was made
// again and counts from zero).
const selfEndGrace = 30 * time.Second

// cleanUp stops a job's workers once it has ended, as its cleanPodPolicy
// says, and reports whether it ended, and how long to wait before looking
// again at workers that should stop by themselves.
func (r *Reconciler) cleanUp(ctx context.Context, j *job, workers client.Object) (bool, time.Duration, error) {
	how := j.ended(workers)
	if how == "" {
		return false, 0, nil
	}
	policy := workers.GetAnnotations()[handoff.CleanPodPolicy]
	endsBy, endsName, _ := handoff.ParseEndsWith(workers.GetAnnotations()[handoff.EndsWith])
	mark := map[string]any{"annotations": map[string]string{handoff.Ended: string(how)}}
	switch w := workers.(type) {
	case *appsv1.StatefulSet:
		// A StatefulSet would restart agents that exited, so a job that
		// ends by its workers' exit stops them whatever the policy.
		stop := policy == "Running" || policy == "All" || endsBy == handoff.EndsWithContainerKind
		if stop && phase.Replicas(w) != 0 {
			if err := r.mergePatch(ctx, w, map[string]any{"metadata": mark, "spec": map[string]any{"replicas": 0}}); err != nil {
				return true, 0, err
			}
			r.cleanedUp(ctx, w, how, policy)
		} else {
			return true, 0, r.markEnded(ctx, w, mark)
		}
	case *batchv1.Job:
		if policy != "Running" && policy != "All" {
			// The workers run on, as the policy asks; the mark still
			// records that the job ended, as on a StatefulSet.
			return true, 0, r.markEnded(ctx, w, mark)
		}
		if w.Spec.SuccessPolicy != nil && endsBy == handoff.EndsWithContainerKind {
			// A worker that succeeded ended the job, and their Job's
			// successPolicy ends it and stops the rest.
			return true, 0, r.markEnded(ctx, w, mark)
		}
		if left := selfEndGrace - j.endedFor(endsName, r.Now()); stopsItself(w) && left > 0 {
			// The launcher tells the workers the job ended, and their Job
			// ends at its first success and stops the rest: nothing to
			// write yet, unless they are still running by then.
			return true, left, r.markEnded(ctx, w, mark)
		}
		if ended, _ := phase.JobOutcome(w); ended == "" && !halted(w) {
			// Suspending deletes the Job's running pods and keeps it from
			// making more; the Job itself stays, as GitOps applied it. A
			// Job that ended by itself has nothing left to stop. Kueue
			// resumes a Job it admitted that is suspended, again and
			// again; it follows a Job it resizes to zero workers, and
			// frees their quota.
			stop := map[string]any{"suspend": true}
			if resizedByKueue(w) {
				stop = map[string]any{"parallelism": 0}
			}
			if err := r.mergePatch(ctx, w, map[string]any{"metadata": mark, "spec": stop}); err != nil {
				return true, 0, err
			}
			r.cleanedUp(ctx, w, how, policy)
		}
		if policy == "All" {
			return true, 0, r.deleteFinishedWorkers(ctx, j, w)
		}
	}
	return true, 0, nil
}

// markEnded records on workers that their job ended, once.
func (r *Reconciler) markEnded(ctx context.Context, w client.Object, mark map[string]any) error {
	if w.GetAnnotations()[handoff.Ended] != "" {
		return nil
	}
	return r.mergePatch(ctx, w, map[string]any{"metadata": mark})
}

// kueueQueueLabel queues a Job for Kueue, which then manages it whole.
const kueueQueueLabel = "kueue.x-k8s.io/queue-name"

// resizedByKueue tells whether a Job is elastic workers Kueue manages and
// resizes. A job of a fixed size is queued as a pod group instead, whose
// Jobs Kueue leaves alone.
func resizedByKueue(w *batchv1.Job) bool {
	return w.Labels[kueueQueueLabel] != "" && isElasticWorkers(w)
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

func (r *Reconciler) cleanedUp(ctx context.Context, workers client.Object, how phase.Phase, policy string) {
	r.Metrics.CleanUps.WithLabelValues(policy).Inc()
	r.Recorder.Eventf(workers, nil, corev1.EventTypeNormal, "CleanedUp", "Stop",
		"the job %s: its workers are stopped (cleanPodPolicy %s)", map[phase.Phase]string{phase.Succeeded: "succeeded", phase.Failed: "failed"}[how], policy)
	log.FromContext(ctx).Info("stopped the workers of an ended job", "workers", workers.GetName(), "outcome", how, "cleanPodPolicy", policy)
}

// deleteFinishedWorkers removes the worker pods a suspended Job leaves:
// those that had already finished.
func (r *Reconciler) deleteFinishedWorkers(ctx context.Context, j *job, w *batchv1.Job) error {
	var errs []error
	for _, p := range j.podsOf(handoff.RoleWorker) {
		if !finished(&p) || p.DeletionTimestamp != nil || !metav1.IsControlledBy(&p, w) {
			continue
		}
		if err := r.Client.Delete(ctx, &p, client.Preconditions{UID: &p.UID}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mergePatch writes only the given fields, under the reconciler's name.
func (r *Reconciler) mergePatch(ctx context.Context, obj client.Object, patch map[string]any) error {
	return mergePatch(ctx, r.Client, r.Metrics, obj, patch)
}

func mergePatch(ctx context.Context, c client.Client, m *Metrics, obj client.Object, patch map[string]any) error {
	m.Writes.WithLabelValues(kindOf(obj)).Inc()
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, mustJSON(patch)), client.FieldOwner(FieldManager))
}
