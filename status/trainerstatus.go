package status

import (
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/handoff/trainerstatus"
	"github.com/trainfn/trainfn/status/phase"
)

// TrainerStatus is the last progress a job's pods reported, Kubeflow
// Trainer's TrainJob status.trainerStatus: the reconciler keeps it on the
// job's first workload (handoff.TrainerStatus).
type TrainerStatus = trainerstatus.TrainerStatus

// Metric is one of the trainer's metrics.
type Metric = trainerstatus.Metric

// trainerStatusOf is the progress the reconciler recorded for a job; nil
// when it recorded none, or none this can read. A record unreadable (not
// JSON, or not valid as Trainer's API has it) is left out, not an error:
// the reconciler validated the report it came from by the same rules, so
// such a record was written by hand or by another version, and one job's
// record must not keep `trainfn status` from telling every other job's
// phase; stale progress shown would be no better than none.
func trainerStatusOf(objs phase.Objects) *TrainerStatus {
	valid := func(v string) bool { _, ok := trainerstatus.Parse(v); return ok }
	s, ok := trainerstatus.Parse(phase.RecordedAnnotation(objs, handoff.TrainerStatus, valid))
	if !ok {
		return nil
	}
	return &s
}
