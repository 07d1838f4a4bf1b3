package phase

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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

// WorkloadObject is a Job or a StatefulSet of a job, as an object a
// client writes (controller-runtime's client.Object is the same
// interface, which status does not link).
type WorkloadObject interface {
	metav1.Object
	runtime.Object
}

// FirstWorkload is the workload where the reconciler records what it
// records for a job (its phase, its pods' last progress report), and
// where RecordedAnnotation looks first: the one of first rank 0 (a
// DIJob's), else the first by name, a Job before a StatefulSet of the
// same name. nil when the job has none. The reconciler's writers and
// `trainfn status` all pick it here, so that what one writes the other
// reads.
func FirstWorkload(objs Objects) WorkloadObject {
	if ws := recordOrder(objs); len(ws) > 0 {
		return ws[0]
	}
	return nil
}

// RecordedAnnotation is what the reconciler recorded for a job under key:
// the value on the first workload (FirstWorkload), else on the first
// workload in that order that carries one. A value valid rejects counts
// as none, so that a record unreadable on one workload does not hide a
// good one on another.
func RecordedAnnotation(objs Objects, key string, valid func(string) bool) string {
	for _, w := range recordOrder(objs) {
		if v, ok := w.GetAnnotations()[key]; ok && valid(v) {
			return v
		}
	}
	return ""
}

// recordOrder is a job's workloads, those of first rank 0 first, each
// group by name, a Job before a StatefulSet of the same name.
func recordOrder(objs Objects) []WorkloadObject {
	type ranked struct {
		w          WorkloadObject
		rank0      bool
		name, kind string
	}
	var ws []ranked
	add := func(w WorkloadObject, kind string) {
		ws = append(ws, ranked{w: w, rank0: w.GetAnnotations()[handoff.FirstRank] == "0", name: w.GetName(), kind: kind})
	}
	for i := range objs.Jobs {
		add(&objs.Jobs[i], "Job")
	}
	for i := range objs.StatefulSets {
		add(&objs.StatefulSets[i], "StatefulSet")
	}
	slices.SortStableFunc(ws, func(a, b ranked) int {
		if a.rank0 != b.rank0 {
			if a.rank0 {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind))
	})
	out := make([]WorkloadObject, len(ws))
	for i, r := range ws {
		out[i] = r.w
	}
	return out
}
