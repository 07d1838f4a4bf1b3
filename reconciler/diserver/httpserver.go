package diserver

import (
	"net/http"
	"time"
)

// How long a connection may take over each part of a request. Callers are
// DI-engine workers on the pod network, whose requests are a few hundred
// bytes: none needs long, and a connection that stops sending must not
// hold a goroutine and a socket for longer than these.
const (
	// ReadHeaderTimeout bounds the wait for a request's headers, from the
	// connection's first byte or from the end of the previous request.
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds reading a whole request, headers and body.
	ReadTimeout = 15 * time.Second
	// RequestTimeout bounds a request's work once read: reviews, reads of
	// the cache, writes and their retries.
	RequestTimeout = 20 * time.Second
	// WriteTimeout bounds the time from the end of a request's headers to
	// the end of its answer, which covers the body, the work and the
	// answer; a caller that does not read its answer is cut off.
	WriteTimeout = ReadTimeout + RequestTimeout + 5*time.Second
	// IdleTimeout closes a kept-alive connection that sends no next
	// request.
	IdleTimeout = 30 * time.Second
	// MaxHeaderBytes bounds a request's headers: a path, a few standard
	// headers and a bearer token (a service account's is one to two KiB).
	// Larger headers are answered 431.
	MaxHeaderBytes = 16 << 10
)

// NewHTTPServer is the DI server's http.Server on addr, serving handler (as
// New returns it) with the limits above. The reconciler serves it as is.
func NewHTTPServer(addr string, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}
