// Package allocator decides how many workers each preemptible DIJob runs
// and on which nodes, the part of DI-orchestrator's Allocator that
// trainfn's reconciler keeps.
//
// A preemptible DIJob runs its workers as a StatefulSet whose replica count
// the reconciler owns within the job's [minReplicas, maxReplicas]. A Policy
// answers in NodeLists: element i is the node of the worker of pod ordinal
// i. The reconciler scales the StatefulSet to the list's length (a scale
// down removes the highest ordinals) and pins each new pod to its node; a
// pod that exists is never moved, so a policy only changes counts and
// places new workers.
//
// The package is pure: no Kubernetes client, no clock, no randomness. The
// same inputs always give the same answer, which keeps the reconciler's
// periodic re-runs from flapping and makes the policy testable by
// simulation.
package allocator
