package phase

import (
	"github.com/trainfn/trainfn/render/handoff"
)

// Recorded is the phase the reconciler last recorded for a job
// (trainfn.dev/phase), to pass to Of as the previous one: read from the
// workload of first rank 0, where the reconciler writes it, else from the
// first workload by name that carries one; "" when none does, or the value
// is no phase.
func Recorded(objs Objects) Phase {
	var found Phase
	for _, w := range workloadsOf(Objects{Jobs: objs.Jobs, StatefulSets: objs.StatefulSets}) {
		p, ok := Parse(w.obj.GetAnnotations()[handoff.Phase])
		if !ok {
			continue
		}
		if w.obj.GetAnnotations()[handoff.FirstRank] == "0" {
			return p
		}
		if found == "" {
			found = p
		}
	}
	return found
}
