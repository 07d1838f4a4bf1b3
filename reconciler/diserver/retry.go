package diserver

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// conflictSteps is how many times a write is tried while its object keeps
// changing after it was read.
const conflictSteps = 8

// conflictBackoff paces the retries of a write whose object changed after
// it was read: concurrent requests race, the cache may be a moment behind,
// and the StatefulSet controller updates the status (a new
// resourceVersion) as pods come and go, so a write may lose a few times in
// a row before it lands.
var conflictBackoff = wait.Backoff{Steps: conflictSteps, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.5, Cap: time.Second}

// MaxRequestsPerWrite bounds what one request admitted by the write
// bucket asks of the API server: a PATCH per try, a live GET of the object
// before each try but the first, and one live GET that checks a refusal
// the cache suggests. Most ask one PATCH.
const MaxRequestsPerWrite = 2*conflictSteps + 1

// retryOnConflict runs write again, after a pause, while it fails because
// its object changed since it was read.
func retryOnConflict(write func() error) error {
	return retry.RetryOnConflict(conflictBackoff, write)
}
