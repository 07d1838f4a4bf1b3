// Package handoff is the contract between trainfn's render and what reads
// its output in the cluster, the reconciler and `trainfn status`: no job
// object exists there, so what they know of a job is what the render wrote
// on the objects it rendered into. Here are its parts, each written by one
// side and read by the other: the labels that find a job's objects and name
// their kind and roles, the names of its objects, the annotations that
// carry run-time facts (elastic bounds, discovery, clean-up, a DIJob's
// ranks, the pods a KubectlExec launcher may exec into, which the admission
// policy of the reconciler's chart reads) and the format of the discovery
// script.
//
// The render writes the first two groups of annotations below; the
// reconciler writes the last, on fields the render leaves out, so the two
// never own the same field, and GitOps never undoes the reconciler's work.
package handoff

import (
	"strings"
)

// Written by the render, on the workers' workload (Job or StatefulSet).
const (
	// ElasticWorkers, "MIN:MAX" on an elastic job's workers (a
	// StatefulSet, or under Kueue an Indexed Job): the bounds the
	// reconciler keeps their count (replicas, parallelism) within.
	ElasticWorkers = "trainfn.dev/elastic-workers"
	// Workers is how many workers an elastic job starts with; the
	// StatefulSet leaves spec.replicas (the Job, spec.parallelism) to run
	// time, and the reconciler sets it to this once.
	Workers = "trainfn.dev/workers"
	// SlotsPerWorker, on an elastic MPIJob's StatefulSet, asks for the
	// discovery script: each ready worker is one "host:slots" line. Its
	// value is spec.slotsPerWorker, 0 or more (ParseSlots).
	SlotsPerWorker = "trainfn.dev/slots-per-worker"
	// LauncherSlots is set when the launcher also works: it heads the
	// discovered hosts with these slots, 0 or more.
	LauncherSlots = "trainfn.dev/launcher-slots"
	// CleanPodPolicy is runPolicy.cleanPodPolicy: None, Running or All.
	CleanPodPolicy = "trainfn.dev/clean-pod-policy"
	// EndsWith names what ends the job: "job/<name>", a Job (the launcher
	// or the master) whose completion or failure ends it, or
	// "container/<name>", the workers' container whose successful exit
	// ends it (an elastic PyTorchJob's agents leave together).
	EndsWith = "trainfn.dev/ends-with"
	// DependsOn, on a pod template, lists the Jobs its pods wait for, as a
	// TrainJob's runtime orders its replicated jobs (JobSet's dependsOn):
	// "<job>=Ready,<job>=Complete". Its pods are held by DependsOnGate,
	// which the reconciler lifts once every Job listed is so: Ready, when
	// its pods are all ready or done; Complete, when it succeeded.
	DependsOn = "trainfn.dev/depends-on"
	// DependsOnGate is the scheduling gate of pods that wait for Jobs.
	DependsOnGate = "trainfn.dev/depends-on"
)

// Written by the render, on the Role of a launcher in the KubectlExec launch
// mode; read by the admission policy the reconciler's chart ships, which
// takes the Role as its parameter.
const (
	// ExecPods, on a KubectlExec launcher's Role, is a regular expression
	// (RE2, anchored) that the name of every pod the launcher may exec
	// into matches, when the render cannot name those pods: they are an
	// Indexed Job's (an MPIJob's workers, <job>-worker; a TrainJob's
	// nodes, the Jobs <job>-node-<j>), whose pods' names the Job controller
	// makes up (IndexedPodNames), and the Role grants pods/exec on the
	// namespace's pods. The admission policy the reconciler's chart ships
	// refuses the ServiceAccount of the Role's name, in the Role's
	// namespace, any pods/exec on a pod whose name does not match it. A
	// Role that names its pods (a StatefulSet's, in resourceNames) has
	// none: RBAC alone keeps the launcher to them.
	ExecPods = "trainfn.dev/exec-pods"
)

// FieldManager is the name everything the reconciler's process writes is
// recorded under (its reconciles, its allocator, its DI server), so that
// managedFields tell those writes from GitOps' applies.
const FieldManager = "trainfn-reconciler"

// Written by the reconciler.
const (
	// ScaledFrom, on elastic workers, records that the reconciler set
	// their first count (to the value given), so that it never does again:
	// later counts are the scaler's.
	ScaledFrom = "trainfn.dev/scaled-from"
	// Ended, on the workers' workload, records that the job ended and how
	// (Succeeded or Failed); the reconciler then holds the workers stopped.
	Ended = "trainfn.dev/ended"
	// Revision, on an elastic StatefulSet, is the render digest of the run
	// the marks above belong to: its template's trainfn.dev/render-digest
	// when the reconciler started it. A StatefulSet rolled to a template of
	// another digest (the job changed in Git) is a new run: the reconciler
	// clears the marks and starts it as it started the first.
	Revision = "trainfn.dev/revision"
	// DiscoveredHosts, on the launcher's pod, is a digest of the discovery
	// script last written: changing it makes the kubelet refresh the pod's
	// ConfigMap volume at once rather than at its next periodic sync.
	DiscoveredHosts = "trainfn.dev/discovered-hosts"
	// GeneratedSSH labels the SSH Secrets the reconciler created.
	GeneratedSSH = "trainfn.dev/generated"
)

// The kinds of what EndsWith names.
const (
	EndsWithJobKind       = "job"
	EndsWithContainerKind = "container"
)

// EndsWithJob is the EndsWith value for a Job.
func EndsWithJob(name string) string { return EndsWithJobKind + "/" + name }

// EndsWithContainer is the EndsWith value for a container of the workers.
func EndsWithContainer(name string) string { return EndsWithContainerKind + "/" + name }

// ParseEndsWith splits an EndsWith value into its kind and name; ok is
// false for anything else.
func ParseEndsWith(v string) (kind, name string, ok bool) {
	kind, name, ok = strings.Cut(v, "/")
	if !ok || name == "" || (kind != EndsWithJobKind && kind != EndsWithContainerKind) {
		return "", "", false
	}
	return kind, name, true
}

// ReconcilerAnnotations are every annotation the reconciler's process
// writes, on workloads and pods: the only keys of a rendered object's
// metadata it may change, which the admission policy its chart ships
// enforces.
var ReconcilerAnnotations = []string{
	ScaledFrom, Ended, Revision, DiscoveredHosts, Allocation, Profilings, Phase, PinnedAt, TrainerStatus,
}
