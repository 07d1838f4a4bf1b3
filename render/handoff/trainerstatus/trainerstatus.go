// Package trainerstatus is Kubeflow Trainer's TrainJob
// status.trainerStatus, the progress a job's pods report: its shape and
// its rules, for the reconciler's progress server, which takes reports
// and records them on the job's first workload (handoff.TrainerStatus),
// and for `trainfn status`, which reads them back. Both keep to one
// definition here, so that what one writes the other reads; the package
// is small so that the trainfn binary links nothing of the reconciler.
package trainerstatus

import (
	"encoding/json"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TrainerStatus is how far the training is, as its trainer says.
type TrainerStatus struct {
	// ProgressPercentage is how far training is, 0 to 100.
	ProgressPercentage *int32 `json:"progressPercentage,omitempty"`
	// EstimatedRemainingSeconds is how long the trainer expects to take
	// still.
	EstimatedRemainingSeconds *int32 `json:"estimatedRemainingSeconds,omitempty"`
	// Metrics are the trainer's own, such as its loss, as it wrote them.
	Metrics []Metric `json:"metrics,omitempty"`
	// LastUpdatedTime is when the trainer reported them, by its clock.
	LastUpdatedTime metav1.Time `json:"lastUpdatedTime"`
}

// Metric is one of the trainer's metrics, its value as a string.
type Metric struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Trainer's bounds (its API's kubebuilder markers); lengths count
// characters, as the API server's OpenAPI validation does.
const (
	MaxMetrics      = 256
	MaxMetricLength = 64
)

// Validate checks s as Trainer's API does; path is where s is.
func (s *TrainerStatus) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p := s.ProgressPercentage; p != nil && (*p < 0 || *p > 100) {
		errs = append(errs, field.Invalid(path.Child("progressPercentage"), *p, "must be between 0 and 100"))
	}
	if e := s.EstimatedRemainingSeconds; e != nil && *e < 0 {
		errs = append(errs, field.Invalid(path.Child("estimatedRemainingSeconds"), *e, "must be at least 0"))
	}
	if len(s.Metrics) > MaxMetrics {
		errs = append(errs, field.TooMany(path.Child("metrics"), len(s.Metrics), MaxMetrics))
	}
	for i, m := range s.Metrics {
		at := path.Child("metrics").Index(i)
		errs = append(errs, checkLength(at.Child("name"), m.Name)...)
		errs = append(errs, checkLength(at.Child("value"), m.Value)...)
	}
	if s.LastUpdatedTime.IsZero() {
		errs = append(errs, field.Required(path.Child("lastUpdatedTime"), "when trainerStatus is given"))
	}
	return errs
}

func checkLength(path *field.Path, v string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(path, "")}
	case utf8.RuneCountInString(v) > MaxMetricLength:
		return field.ErrorList{field.TooLong(path, "", MaxMetricLength)}
	}
	return nil
}

// Parse reads a record of handoff.TrainerStatus; ok is false when it is
// not JSON of a valid TrainerStatus. Fields it does not know are ignored,
// so that a newer reconciler's record, with fields Trainer has added,
// still reads.
func Parse(v string) (s TrainerStatus, ok bool) {
	if err := json.Unmarshal([]byte(v), &s); err != nil || len(s.Validate(field.NewPath("trainerStatus"))) > 0 {
		return TrainerStatus{}, false
	}
	return s, true
}
