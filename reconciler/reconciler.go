// Package reconciler is trainfn's in-cluster half: it keeps the run-time
// facts of rendered jobs, and nothing else: GitOps owns every field the
// render writes. It reads what a job needs from the annotations the render
// put on its objects (package handoff) and writes only fields the render
// leaves out. Each concern is a package of its own, with the rights it
// needs beside its code (their Rules), which the chart grants and its
// admission policy confines to trainfn's objects:
//
//   - observed: one job's objects, from the label-filtered cache;
//   - sshsecret: the job's SSH Secret, when the user supplied none;
//   - scaling: an elastic job's worker count, set once to the rendered
//     count, then kept within the job's bounds, whoever scales it;
//   - discovery: an elastic MPIJob's discovery script, the one ConfigMap
//     key the render omits, kept equal to the workers that can take work;
//   - gates: the scheduling gates of pods that wait for other Jobs (a
//     TrainJob's dependsOn) or for the allocator's node (a preemptible
//     DIJob's new workers);
//   - cleanup: stopping a job's workers when it ends, as its
//     runPolicy.cleanPodPolicy says;
//   - jobphase: a job's phase, on its first workload, and the events and
//     counters of its changes;
//   - allocation: the allocator of preemptible DIJobs (policy in package
//     allocator), on the leader;
//   - diserver: DI-orchestrator's DI server API, on every replica;
//   - progress: Kubeflow Trainer's progress API, on every replica, and
//     the CA its callers trust, in each progress job's ConfigMap.
package reconciler

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/trainfn/trainfn/reconciler/cleanup"
	"github.com/trainfn/trainfn/reconciler/discovery"
	"github.com/trainfn/trainfn/reconciler/gates"
	"github.com/trainfn/trainfn/reconciler/jobphase"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/progress"
	"github.com/trainfn/trainfn/reconciler/scaling"
	"github.com/trainfn/trainfn/reconciler/sshsecret"
	"github.com/trainfn/trainfn/reconciler/write"
)

// Reconciler keeps the run-time facts of one job per request, the job's
// observed.Key.
type Reconciler struct {
	// Cache reads the job's objects.
	Cache client.Reader
	// Writer writes what the concerns below need no object of their own
	// for: a TrainJob's dependency gates.
	Writer     write.Writer
	Reconciles prometheus.Counter
	SSH        *sshsecret.Ensurer
	Scaling    *scaling.Scaler
	Discovery  *discovery.Updater
	Cleanup    *cleanup.Cleaner
	Pinner     *gates.Pinner
	Phase      *jobphase.Recorder
	// ProgressCA fills a progress job's CA ConfigMap; nil without the
	// progress server.
	ProgressCA *progress.CAFiller
}

// Reconcile brings one job's run-time facts up to date, concern by
// concern; one that fails does not keep the others from their work.
func (r *Reconciler) Reconcile(ctx context.Context, key observed.Key) (reconcile.Result, error) {
	r.Reconciles.Inc()
	j, err := observed.Load(ctx, r.Cache, key)
	if err != nil {
		return reconcile.Result{}, err
	}
	errs := []error{
		r.SSH.Ensure(ctx, j),
		r.Scaling.Renew(ctx, j),
		gates.LiftDependencies(ctx, r.Writer, j),
	}
	errs = append(errs, r.ProgressCA.Fill(ctx, j))
	ended, again, err := r.Cleanup.Stop(ctx, j)
	errs = append(errs, err)
	if e := j.Elastic(); e != nil && !ended {
		errs = append(errs, r.Scaling.Scale(ctx, e), r.Discovery.Update(ctx, j, e))
		if e.Preemptible() {
			errs = append(errs, r.Pinner.Lift(ctx, j, e.Set))
		}
	}
	errs = append(errs, r.Phase.Record(ctx, j))
	return reconcile.Result{RequeueAfter: again}, errors.Join(errs...)
}
