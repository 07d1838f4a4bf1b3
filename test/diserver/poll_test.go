//go:build e2e

package diserver

import (
	"context"
	"testing"
	"time"
)

// bound is how long anything may take to converge. The machine is shared
// and noisy, so tests assert that things converge, never how fast.
const bound = 60 * time.Second

// eventually polls check until it returns nil, and fails the test with what
// check saw last if that takes longer than bound.
func eventually(t testing.TB, what string, check func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	for {
		callCtx, done := context.WithTimeout(ctx, 10*time.Second)
		last := check(callCtx)
		done()
		if last == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %s; last seen: %v", what, bound, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// timeout bounds one call to the API server.
func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
