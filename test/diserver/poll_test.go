//go:build e2e

package diserver

import (
	"context"
	"testing"
	"time"

	"github.com/trainfn/trainfn/test/testtool"
)

// bound is how long anything may take to converge. The machine is shared
// and noisy, so tests assert that things converge, never how fast.
const bound = 60 * time.Second

// eventually polls check until it returns nil, for at most bound.
func eventually(t testing.TB, what string, check func(context.Context) error) {
	t.Helper()
	testtool.Eventually(t, bound, what, check)
}

// timeout bounds one call to the API server.
func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
