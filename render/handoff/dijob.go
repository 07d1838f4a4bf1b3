package handoff

// Written by the render, on every workload (Job or StatefulSet) a DIJob
// renders into. A DIJob's workers are numbered across its workloads: its
// rank. Seed-shaped jobs (spec.template) have one workload, <job>-worker;
// task-shaped ones (spec.tasks) one Indexed Job per task, <job>-<task>, in
// the order of the tasks.
const (
	// DIJobGeneration marks a DIJob's workload and carries the generation
	// in its DI_JOB_ID (namespace.name.generation): the DIJob's
	// metadata.generation when the spec sets one, else 1.
	DIJobGeneration = "trainfn.dev/dijob-generation"
	// FirstRank is the rank of the workload's pod of index 0; pod i of the
	// workload has rank FirstRank+i.
	FirstRank = "trainfn.dev/first-rank"
	// Priority is the DIJob's spec.priority (normal or high), which the
	// allocator serves first.
	Priority = "trainfn.dev/priority"
	// AllocationGate is the scheduling gate of a preemptible DIJob's pods:
	// the reconciler tightens a gated pod's node affinity to the node the
	// allocator chose for its index, then removes the gate, so that the
	// scheduler still binds it.
	AllocationGate = "trainfn.dev/allocation"
)

// A preemptible DIJob is the one whose workload carries ElasticWorkers
// (MIN:MAX from spec.minReplicas and spec.maxReplicas): a StatefulSet whose
// replicas the reconciler owns, which the DI server API and the allocator
// change within the bounds.

// Written by the reconciler, on a DIJob's workloads.
const (
	// Allocation, on a preemptible DIJob's StatefulSet, is a JSON array of
	// node names: element i is the node of the pod of index i.
	Allocation = "trainfn.dev/allocation"
	// Profilings, on the workload of FirstRank 0, is a JSON object of the
	// profiling data the job posted to the DI server.
	Profilings = "trainfn.dev/profilings"
	// Phase, on the workload of FirstRank 0, is the DIJob's phase: Pending,
	// Starting, Running, Restarting, Succeeded or Failed.
	Phase = "trainfn.dev/phase"
	// PinnedAt, on a preemptive DIJob's pod, is when the reconciler pinned
	// it to its node and lifted its gate (RFC 3339): how long it has waited
	// for the node counts from then.
	PinnedAt = "trainfn.dev/pinned-at"
)

// DIPort is the port DI-engine workers listen on, the first of
// parallelWorkers consecutive ones, and its name.
const (
	DIPort     = 22270
	DIPortName = "di-port"
)

// DIJobKind is the KindLabel of a DIJob's workloads: every one of them
// runs workers (a task's name is its role), and the reconciler records the
// DIJob's phase, serves DI-engine's server API and places a preemptible
// DIJob's workers for them.
const DIJobKind = "DIJob"

// IsDIJob tells whether a workload's labels say it is a DIJob's.
func IsDIJob(labels map[string]string) bool { return labels[KindLabel] == DIJobKind }
