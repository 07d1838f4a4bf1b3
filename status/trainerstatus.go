package status

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// TrainerStatus is the last progress a job's pods reported, Kubeflow
// Trainer's TrainJob status.trainerStatus: the reconciler keeps it on the
// job's first workload (handoff.TrainerStatus).
type TrainerStatus struct {
	// ProgressPercentage is how far training is, 0 to 100.
	ProgressPercentage *int32 `json:"progressPercentage,omitempty"`
	// EstimatedRemainingSeconds is how long the trainer expects to take
	// still.
	EstimatedRemainingSeconds *int32 `json:"estimatedRemainingSeconds,omitempty"`
	// Metrics are the trainer's own, such as its loss, as it wrote them.
	Metrics []Metric `json:"metrics,omitempty"`
	// LastUpdatedTime is when the trainer reported them.
	LastUpdatedTime metav1.Time `json:"lastUpdatedTime"`
}

// Metric is one of the trainer's metrics.
type Metric struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// trainerStatusOf is the progress the reconciler recorded for a job; nil
// when it recorded none, or none this can read. A record unreadable (not
// JSON, no lastUpdatedTime, a percentage out of 0..100) is left out, not
// an error: the reconciler validated the report it came from, as
// Trainer's API does, so such a record was written by hand or by another
// version, and one job's record must not keep `trainfn status` from
// telling every other job's phase; stale progress shown would be no
// better than none.
func trainerStatusOf(objs phase.Objects) *TrainerStatus {
	valid := func(v string) bool { _, ok := parseTrainerStatus(v); return ok }
	s, ok := parseTrainerStatus(phase.RecordedAnnotation(objs, handoff.TrainerStatus, valid))
	if !ok {
		return nil
	}
	return &s
}

// parseTrainerStatus reads a record of handoff.TrainerStatus. Fields it
// does not know are ignored, so that a newer reconciler's record, with
// fields Trainer has added, still reads.
func parseTrainerStatus(v string) (s TrainerStatus, ok bool) {
	if err := json.Unmarshal([]byte(v), &s); err != nil || s.LastUpdatedTime.IsZero() {
		return TrainerStatus{}, false
	}
	if p := s.ProgressPercentage; p != nil && (*p < 0 || *p > 100) {
		return TrainerStatus{}, false
	}
	if r := s.EstimatedRemainingSeconds; r != nil && *r < 0 {
		return TrainerStatus{}, false
	}
	return s, true
}
