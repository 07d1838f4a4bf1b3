package testtool

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Eventually polls check until it returns nil, and fails the test with
// what check saw last if that takes longer than within, or at once if
// check gives up (GiveUp). Tests on a shared, noisy machine assert that
// things converge, never how fast.
func Eventually(t testing.TB, within time.Duration, what string, check func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
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
			t.Fatalf("%s: not within %s; last seen: %v", what, within, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// GiveUp makes Eventually stop polling: waiting longer cannot help.
func GiveUp(err error) error { return givenUp{err} }

type givenUp struct{ error }
