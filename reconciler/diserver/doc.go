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
//     changed by a merge patch of spec.replicas, within the job's bounds;
//   - the profilings are an annotation on the workload of first rank 0,
//     whose throughput map the allocator reads back with ParseProfilings.
//
// DI-engine's workers call with plain HTTP and no credentials, so a request
// about a job is served only when it comes from the address of one of the
// job's own pods (see podAt); with Policy.TokenReview, also when it
// presents a bearer token whose user holds the rights to what it does
// (see reviewer). Reads are answered from the reconciler's cache; writes
// are bounded by a token bucket (Policy) and are conditional on what was
// read; NewHTTPServer bounds how long a connection may stall.
//
// Every answer is DI-orchestrator's envelope (see Response) with an HTTP
// status that tells a caller whether to fix its request (4xx), wait (429)
// or retry (503).
package diserver
