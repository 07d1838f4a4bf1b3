package diserver

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// conflictBackoff paces the retries of a write whose object changed after
// it was read: concurrent requests race, and the StatefulSet controller
// updates the status (a new resourceVersion) as pods come and go, so a
// write may lose a few times in a row before it lands.
var conflictBackoff = wait.Backoff{Steps: 8, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.5, Cap: time.Second}

// retryOnConflict runs write again, after a pause, while it fails because
// its object changed since it was read.
func retryOnConflict(write func() error) error {
	return retry.RetryOnConflict(conflictBackoff, write)
}
