package progress

import (
	"encoding/json"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/reconciler/internal/closing"
)

// refusal is a request refused: a metav1.Status, as the API server and
// Trainer's status server answer one.
type refusal struct {
	status metav1.Status
	// retryAfter, in seconds, for 429.
	retryAfter int
}

func (r *refusal) Error() string { return r.status.Message }

func refuse(code int32, reason metav1.StatusReason, message string) *refusal {
	return &refusal{status: metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: code, Reason: reason, Message: message,
	}}
}

// invalid is 422 naming each field at fault, as the API server answers an
// object that fails validation.
func invalid(errs field.ErrorList) *refusal {
	s := apierrors.NewInvalid(schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "UpdateTrainJobStatusRequest"}, "", errs).ErrStatus
	s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	return &refusal{status: s}
}

// write answers the refusal, with the headers its code calls for.
func (r *refusal) write(w http.ResponseWriter) {
	h := w.Header()
	switch r.status.Code {
	case http.StatusTooManyRequests:
		h.Set("Retry-After", strconv.Itoa(max(r.retryAfter, 1)))
	case http.StatusForbidden, http.StatusRequestEntityTooLarge:
		closing.AfterRefusal(w)
	}
	writeJSON(w, int(r.status.Code), r.status)
}

// writeJSON answers v as JSON. A failed write means the caller has gone:
// nothing is left to do.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
