// Package closing ends the connection of a caller an HTTP server refused
// for who it is or for its body's size, the same way for each of the
// reconciler's servers.
package closing

import (
	"net/http"
	"time"
)

// BodyGrace is how long a refused caller has, once answered, to send the
// rest of a body the server did not read before its connection is closed.
// net/http reads a rest of at most 256 KiB; a larger one it does not wait
// for.
const BodyGrace = 2 * time.Second

// AfterRefusal makes the answer being written to w the connection's
// last. A caller refused for who it is has nothing more to send, and one
// whose body is too large would send it again: the connection is not kept
// for another request, nor held for the server's whole read timeout. It
// is not cut at once either: a connection closed with a body still coming
// is reset, and the reset can lose the caller its answer (RFC 9112,
// section 9.6), so net/http reads what is left of the body for BodyGrace
// first.
func AfterRefusal(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	// Not every ResponseWriter can (a test's recorder); a server's can.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(BodyGrace))
}
