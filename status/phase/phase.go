// Package phase derives a trainfn job's phase from its live objects. No job
// object exists in the cluster to hold a status, so the reconciler, which
// records the phase, and `trainfn status`, which shows it, both read it from
// the job's Jobs, StatefulSets and pods, by the rules here and nowhere else.
//
// The phases are DI-orchestrator's, applied to every kind trainfn renders
// (DIJob, MPIJob, PyTorchJob). Of decides them in this order, the first
// rule that holds winning:
//
//  1. Unknown: the job has no workload (Job or StatefulSet) left.
//  2. Failed or Succeeded, the job's end, decided by the first of:
//     a. the reconciler's record, trainfn.dev/ended on a workload (Failed
//     if any says Failed);
//     b. the ending Job a workload names (trainfn.dev/ends-with: job/NAME,
//     the launcher or master) has Failed or FailureTarget (Failed), or
//     Complete or SuccessCriteriaMet (Succeeded): that Job decides, as it
//     does for the reconciler, whatever the workers' Jobs say;
//     c. any Job has Failed=True or FailureTarget=True: Failed;
//     d. a workload ends with a container (ends-with: container/NAME) and
//     that container of one of its pods exited with status 0: Succeeded;
//     e. every workload is a Job with Complete=True or
//     SuccessCriteriaMet=True: Succeeded.
//  3. Pending, when a Job not yet done is suspended (runPolicy.suspend,
//     or a queue holding it): it will not start by itself.
//  4. Running: every workload has all the pods it should have now, each
//     Running and Ready, and the job expects at least one pod.
//  5. Held: not Running, a previous phase was recorded and is no end, and
//     a Job has not caught up with its pods yet: a pod of it is done
//     (finished, or every container ended with no restart to come) and
//     the Job has not counted it (the pod holds the Job's tracking
//     finalizer or is listed in status.uncountedTerminatedPods), or the
//     Job has every completion and not yet its condition. The job keeps
//     its previous phase, reason PodsSettling, until the Job's next status
//     update: a launcher or master just done is not a running job's lost
//     pod.
//  6. Restarting: not Running, and the job restarted or had been running:
//     a live pod's container restarted (restartCount > 0), a Job not yet
//     done replaced failed pods (status.failed > 0), or the previous phase
//     was Running or Restarting.
//  7. Pending: a workload's count is not set yet (elastic workers the
//     reconciler has not scaled), a workload has fewer live pods than
//     it should, a live pod is scheduling-gated or not yet scheduled, or
//     the job expects no pod at all.
//  8. Starting: every pod exists and is scheduled, not all are running and
//     ready, and nothing restarted.
//
// The pods a workload should have now are, for a Job done (Complete or
// SuccessCriteriaMet), none; for another Job, spec.parallelism less the
// pods that succeeded, and never more than the completions left; for a
// StatefulSet, spec.replicas; for elastic workers of either kind the
// reconciler has not scaled yet, the count it will set
// (trainfn.dev/workers). A live pod is
// one neither finished nor being deleted, owned by the workload. Once the
// job has ended, it expects no pod.
package phase

// Phase is where a job is in its life.
type Phase string

const (
	// Pending: the job is submitted, and not all its pods are created or
	// placed on nodes.
	Pending Phase = "Pending"
	// Starting: every pod is created and placed, and not all run and are
	// ready yet.
	Starting Phase = "Starting"
	// Running: every pod the job should have runs and is ready.
	Running Phase = "Running"
	// Restarting: a pod was restarted or replaced, or the job had been
	// running and not every pod runs and is ready now.
	Restarting Phase = "Restarting"
	// Succeeded: the job ended well.
	Succeeded Phase = "Succeeded"
	// Failed: the job ended in failure.
	Failed Phase = "Failed"
	// Unknown: nothing is left to tell; DI-orchestrator defines it and
	// never sets it, and here it only means that no workload exists.
	Unknown Phase = "Unknown"
)

// phases are every Phase, for Parse.
var phases = []Phase{Pending, Starting, Running, Restarting, Succeeded, Failed, Unknown}

// Parse reads a recorded phase; ok is false for anything but a Phase's
// exact name.
func Parse(s string) (p Phase, ok bool) {
	for _, p := range phases {
		if string(p) == s {
			return p, true
		}
	}
	return "", false
}

// Ended tells whether the phase is an end: nothing changes it any more.
func (p Phase) Ended() bool { return p == Succeeded || p == Failed }

// hadRun tells whether a previous phase means the job had been running,
// so that a shortfall now is a restart, not a start.
func (p Phase) hadRun() bool { return p == Running || p == Restarting }
