package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/handoff/trainerstatus"
)

// MaxBody is the largest request body read, Kubeflow Trainer's status
// server's: 256 metrics of 64-character names and values fit in it.
const MaxBody = 64 << 10

// Request is the body a pod posts, Kubeflow Trainer's
// UpdateTrainJobStatusRequest.
type Request struct {
	// TrainerStatus is the report; none (or null) changes nothing.
	TrainerStatus *TrainerStatus `json:"trainerStatus,omitempty"`
}

// TrainerStatus is Kubeflow Trainer's TrainJob status.trainerStatus: how
// far the training is, as its trainer says. Recorded as is, as JSON, in
// the job's first workload's trainfn.dev/trainer-status annotation.
type TrainerStatus = trainerstatus.TrainerStatus

// Metric is one of the trainer's metrics, its value as a string.
type Metric = trainerstatus.Metric

// decode reads a request body of at most MaxBody bytes. Fields it does not
// know are ignored, as Trainer's server ignores them, so that a client of
// a later Trainer is not refused for what it adds.
func decode(body io.Reader) (*Request, *refusal) {
	raw, err := io.ReadAll(io.LimitReader(body, MaxBody+1))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge) || err == nil && len(raw) > MaxBody:
		return nil, refuse(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge,
			fmt.Sprintf("body: larger than %d bytes", MaxBody))
	case err != nil:
		return nil, refuse(http.StatusBadRequest, metav1.StatusReasonBadRequest, "body: reading: "+err.Error())
	}
	var r Request
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&r); err != nil {
		return nil, invalid(field.ErrorList{decodingError(err)})
	}
	return &r, nil
}

// decodingError names the field a decoding error is about.
func decodingError(err error) *field.Error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return field.Invalid(field.NewPath(typeErr.Field), typeErr.Value, "want "+typeErr.Type.String())
	}
	return field.Invalid(field.NewPath("body"), "", "not a JSON object "+`{"trainerStatus": {...}}`+": "+err.Error())
}

// validate checks a report as Trainer's API does.
func validate(s *TrainerStatus) field.ErrorList {
	return s.Validate(field.NewPath("trainerStatus"))
}

// MaxClockSkew is how far ahead of the server's clock a report's
// lastUpdatedTime may be. The time is the pod's clock and orders nothing
// here (the server's acceptance does), but it is shown as when the
// progress was measured: a report dated later than clocks synchronized by
// NTP drift apart comes from a broken clock, and would read as fresh for
// as long as that clock is ahead. Five minutes is Kerberos' customary
// bound on the skew between hosts.
const MaxClockSkew = 5 * time.Minute

// checkClock refuses a report dated more than MaxClockSkew after now.
func checkClock(s *TrainerStatus, now time.Time) field.ErrorList {
	if s.LastUpdatedTime.After(now.Add(MaxClockSkew)) {
		return field.ErrorList{field.Invalid(field.NewPath("trainerStatus", "lastUpdatedTime"), s.LastUpdatedTime.UTC().Format(time.RFC3339),
			fmt.Sprintf("more than %s after the server's clock (%s)", MaxClockSkew, now.UTC().Format(time.RFC3339)))}
	}
	return nil
}
