//go:build e2e

package reconcile

import (
	"context"
	"errors"
	"testing"
	"time"
)

// bound is how long anything may take to converge. The machine is shared
// and noisy, so tests assert that things converge, never how fast; the
// longest wait, a crashed leader's lease running out, is 15 seconds.
const bound = 60 * time.Second

// eventually polls check until it returns nil, and fails the test with
// what check saw last if that takes longer than bound, or at once if check
// gives up.
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
		var g givenUp
		if errors.As(last, &g) {
			t.Fatalf("%s: %v", what, g.error)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %s; last seen: %v", what, bound, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// giveUp makes eventually stop polling: waiting longer cannot help.
func giveUp(err error) error { return givenUp{err} }

type givenUp struct{ error }

// timeout bounds one call to the API server.
func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
