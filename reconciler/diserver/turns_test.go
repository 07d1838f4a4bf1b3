package diserver

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Requests writing one object take turns, each starting from what the one
// before it wrote; the queue is forgotten once empty.
func TestTurns(t *testing.T) {
	ts := newTurns()
	cached := workerSet("j", 1, 2)
	ctx := context.Background()

	first, doneFirst, err := ts.take(ctx, cached)
	require.NoError(t, err)
	require.Same(t, cached, first, "the first turn starts from the cache")

	type taken struct {
		start client.Object
		done  func(client.Object)
	}
	second := make(chan taken)
	go func() {
		start, done, err := ts.take(ctx, cached)
		if err != nil {
			panic(err)
		}
		second <- taken{start, done}
	}()
	// The second request queues behind the first.
	for queued := 0; queued < 2; runtime.Gosched() {
		ts.mu.Lock()
		queued = ts.byID[cached.UID].queued
		ts.mu.Unlock()
	}
	// A third request gives up waiting: it leaves the queue.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = ts.take(canceled, cached)
	require.Error(t, err)
	select {
	case <-second:
		t.Fatal("a second request wrote during the first one's turn")
	default:
	}

	written := workerSet("j", 1, 3)
	written.ResourceVersion = "2"
	doneFirst(written)
	s := <-second
	require.Equal(t, "2", s.start.GetResourceVersion(), "the second turn does not start from the first one's write")
	require.NotSame(t, written, s.start)
	s.done(nil)
	require.Empty(t, ts.byID, "an empty queue is kept")

	// A later burst starts from the cache again.
	again, done, err := ts.take(ctx, cached)
	require.NoError(t, err)
	require.Same(t, cached, again)
	done(nil)
}
