package phase

import (
	"github.com/trainfn/trainfn/render/handoff"
)

// Recorded is the phase the reconciler last recorded for a job
// (trainfn.dev/phase), to pass to Of as the previous one; "" when none
// does, or the value is no phase.
func Recorded(objs Objects) Phase {
	p, _ := Parse(RecordedAnnotation(objs, handoff.Phase, func(v string) bool {
		_, ok := Parse(v)
		return ok
	}))
	return p
}

// RecordedAnnotation is what the reconciler recorded for a job under key,
// on the job's first workload: the value on the workload of first rank 0,
// where the reconciler writes it, else on the first workload by name that
// carries one; "" when none does. A value valid rejects counts as none, so
// that a record unreadable on one workload does not hide a good one on
// another.
func RecordedAnnotation(objs Objects, key string, valid func(string) bool) string {
	found := ""
	for _, w := range workloadsOf(Objects{Jobs: objs.Jobs, StatefulSets: objs.StatefulSets}) {
		v, ok := w.obj.GetAnnotations()[key]
		if !ok || !valid(v) {
			continue
		}
		if w.obj.GetAnnotations()[handoff.FirstRank] == "0" {
			return v
		}
		if found == "" {
			found = v
		}
	}
	return found
}
