package diserver

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// turns gives this server's requests that write one object their turns,
// one at a time. Concurrent requests about one job (its workers posting
// profilings while one resizes it) would otherwise all start from the same
// resourceVersion, and all but one lose and retry, each retry a GET and a
// PATCH more; in turn, each starts from the object as the previous one
// left it, which the cache learns of only a moment later. The writes stay
// conditional on the resourceVersion: a turn guards against this server's
// own races only, not another replica's, the allocator's or a
// controller's.
type turns struct {
	mu   sync.Mutex
	byID map[types.UID]*turn
}

// turn is the queue of requests writing one object.
type turn struct {
	// token is held by the request whose turn it is.
	token chan struct{}
	// queued counts the requests holding or awaiting the turn; the turn
	// is forgotten when none is left.
	queued int
	// last is the object as the last write in this queue left it.
	last client.Object
}

func newTurns() *turns { return &turns{byID: map[types.UID]*turn{}} }

// take waits for the request's turn to write obj, or for ctx to end. It
// returns the freshest copy of obj this server knows (obj itself, or what
// an earlier turn wrote) and the function that ends the turn, given the
// object as this request's write left it (nil if it wrote nothing).
func (ts *turns) take(ctx context.Context, obj client.Object) (client.Object, func(written client.Object), error) {
	ts.mu.Lock()
	t := ts.byID[obj.GetUID()]
	if t == nil {
		t = &turn{token: make(chan struct{}, 1)}
		ts.byID[obj.GetUID()] = t
	}
	t.queued++
	ts.mu.Unlock()
	leave := func() {
		ts.mu.Lock()
		if t.queued--; t.queued == 0 {
			delete(ts.byID, obj.GetUID())
		}
		ts.mu.Unlock()
	}
	select {
	case t.token <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, nil, fromAPIServer(ctx.Err(), "waiting for the job's other requests")
	}
	start := obj
	if t.last != nil {
		start = t.last.DeepCopyObject().(client.Object)
	}
	return start, func(written client.Object) {
		if written != nil {
			t.last = written.DeepCopyObject().(client.Object)
		}
		<-t.token
		leave()
	}, nil
}
