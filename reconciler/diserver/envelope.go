package diserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/trainfn/trainfn/reconciler/internal/closing"
)

// Response is the body of every answer, shaped as DI-orchestrator's server
// shapes it, so that clients written for it read ours unchanged.
type Response struct {
	Success bool   `json:"success"`
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data is the answer: a list of "host:port" strings, or null.
	Data any `json:"data"`
}

// DI-orchestrator's values of Response.Code; the HTTP status says more.
const (
	CodeSucceeded = 0
	CodeFailed    = 1
)

// requestError is a request that failed: the HTTP status it answers with
// and a message that says what to change or why to retry.
type requestError struct {
	status  int
	message string
	// retryAfter is when to try again, in seconds, for a request over the
	// rate (429).
	retryAfter int
}

func (e *requestError) Error() string { return e.message }

func fail(status int, format string, args ...any) *requestError {
	return &requestError{status: status, message: fmt.Sprintf(format, args...)}
}

// respond writes the envelope. An encoding error cannot happen for the
// strings and string lists the API answers with, and a failed write means
// the caller has gone: neither leaves anything to do.
func respond(w http.ResponseWriter, status int, message string, data any) {
	body := Response{Success: status < 300, Code: CodeSucceeded, Message: message, Data: data}
	if !body.Success {
		body.Code, body.Data = CodeFailed, nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusServiceUnavailable {
		// The API server's trouble is usually brief.
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// refuse answers a failed request, with the headers its status calls for.
func refuse(w http.ResponseWriter, e *requestError) {
	h := w.Header()
	switch e.status {
	case http.StatusTooManyRequests:
		h.Set("Retry-After", strconv.Itoa(max(e.retryAfter, 1)))
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="`+Audience+`"`)
	}
	switch e.status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge:
		closing.AfterRefusal(w)
	}
	respond(w, e.status, e.message, nil)
}
