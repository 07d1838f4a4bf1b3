// Package diserver serves DI-orchestrator's "DI server" HTTP API for the
// DIJobs trainfn renders, so that DI-engine's workers, which call it to list
// their peers, to grow or shrink their job and to report profilings, run
// unchanged without DI-orchestrator.
//
// No DIJob object exists in the cluster: a job is the workloads (Indexed
// Jobs, or one StatefulSet for a preemptible job) that carry its name label
// and the annotations of package handoff. What DI-orchestrator kept in the
// DIJob's status lives on those workloads instead:
//
//   - the worker count of a preemptible job is its StatefulSet's replicas,
//     changed through the scale subresource, within the job's bounds;
//   - the profilings are an annotation on the workload of first rank 0,
//     whose throughput map the allocator reads back with ParseProfilings.
//
// Every answer is DI-orchestrator's envelope (see Response) with an HTTP
// status that tells a caller whether to fix its request (4xx) or retry
// (503).
package diserver
