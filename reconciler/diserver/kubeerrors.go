package diserver

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// fromAPIServer turns a failed call to the API server into the answer a
// caller can act on: 404 when the object went away meanwhile, 500 when the
// server refused what the DI server asked (its RBAC, say: retrying will not
// help), and 503 otherwise (unreachable, overloaded, timed out, or an
// object that kept changing under every retry: retrying later may).
func fromAPIServer(err error, doing string) *requestError {
	var known *requestError
	if errors.As(err, &known) {
		return known
	}
	switch {
	case apierrors.IsNotFound(err):
		return fail(http.StatusNotFound, "%s: %v", doing, err)
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err), apierrors.IsInvalid(err),
		apierrors.IsBadRequest(err), apierrors.IsMethodNotSupported(err), apierrors.IsNotAcceptable(err),
		apierrors.IsUnsupportedMediaType(err), apierrors.IsRequestEntityTooLargeError(err):
		return fail(http.StatusInternalServerError, "%s: the API server refused: %v", doing, err)
	case apierrors.IsConflict(err):
		return fail(http.StatusServiceUnavailable, "%s: the object kept changing; retry: %v", doing, err)
	}
	return fail(http.StatusServiceUnavailable, "%s: the API server failed; retry: %v", doing, err)
}
