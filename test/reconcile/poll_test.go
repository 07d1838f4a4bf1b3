//go:build e2e

package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/trainfn/trainfn/test/testtool"
)

// bound is how long anything may take to converge. The machine is shared
// and noisy, so tests assert that things converge, never how fast; the
// longest wait, a crashed leader's lease running out, is 15 seconds.
const bound = 60 * time.Second

// eventually polls check until it returns nil, for at most bound.
func eventually(t testing.TB, what string, check func(context.Context) error) {
	t.Helper()
	testtool.Eventually(t, bound, what, check)
}

// giveUp makes eventually stop polling: waiting longer cannot help.
func giveUp(err error) error { return testtool.GiveUp(err) }

// timeout bounds one call to the API server.
func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
