//go:build e2e

package diserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	di "github.com/trainfn/trainfn/reconciler/diserver"
)

// slack is how much longer than its timeout the server may take to close
// a connection: the machine is shared and noisy.
const slack = 20 * time.Second

// A connection that stops sending is closed by the server within the
// timeout of what it was sending, however many there are: headers never
// finished, a body never sent, nothing sent at all, or nothing after an
// answer; a stranger's at once. Each is measured from the client's side,
// which waits for the server to close it, at most the timeout and slack.
func TestStalledConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	set := preemptible{name: "stalled", generation: 1, bounds: "1:3", replicas: 1}.create(t, ns)
	pod := s.fromPodOf(t, set)
	path := replicasPath(ns, "stalled", 1)
	host := strings.TrimPrefix(s.url, "http://")

	for _, tc := range []struct {
		name string
		// from is the address the connection comes from.
		from string
		// sent is what the client sends, and then no more.
		sent string
		// connections are how many such connections are open at once.
		connections int
		// limit is how long the server may take to close each: the
		// timeout of what was sent, and slack.
		limit time.Duration
		// answer is the status the server answers with before it closes
		// the connection; none when zero.
		answer int
	}{
		{name: "nothing sent", from: pod.from, connections: 10, limit: di.ReadHeaderTimeout + slack},
		{name: "headers never finished", from: pod.from, sent: "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Le",
			connections: 10, limit: di.ReadHeaderTimeout + slack, answer: http.StatusBadRequest},
		{name: "a body never sent", from: pod.from, sent: "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 20\r\n\r\n{\"repl",
			connections: 100, limit: di.ReadTimeout + slack, answer: http.StatusRequestTimeout},
		{name: "nothing after an answer", from: pod.from, sent: "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n",
			connections: 10, limit: di.IdleTimeout + slack, answer: http.StatusOK},
		// At once: well before the body's timeout, which would otherwise
		// close it.
		{name: "a stranger's body never sent", from: "127.0.0.1", sent: "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 20\r\n\r\n",
			connections: 10, limit: di.ReadTimeout / 2, answer: http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var wg sync.WaitGroup
			errs := make(chan error, tc.connections)
			closedAfter := make(chan time.Duration, tc.connections)
			for range tc.connections {
				wg.Go(func() {
					took, err := stall(s.url, tc.from, tc.sent, tc.limit, tc.answer)
					errs <- err
					closedAfter <- took
				})
			}
			wg.Wait()
			close(errs)
			close(closedAfter)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			var longest time.Duration
			for took := range closedAfter {
				longest = max(longest, took)
			}
			t.Logf("%d connections closed by the server, the last %s after the client stopped sending", tc.connections, longest.Round(time.Millisecond))
		})
	}
}

// stall opens a connection to url from an address, sends what it is
// given, reads the answer it expects, and waits for the server to close
// the connection: an error if it is still open after limit. It returns how
// long the server took to close it.
func stall(url, from, sent string, limit time.Duration, answer int) (time.Duration, error) {
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := dialer.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	start := time.Now()
	if err := conn.SetReadDeadline(start.Add(limit)); err != nil {
		return 0, err
	}
	if _, err := io.WriteString(conn, sent); err != nil {
		return 0, err
	}
	r := bufio.NewReader(conn)
	if answer != 0 {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return 0, fmt.Errorf("reading the answer: %w", err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		if closeErr := resp.Body.Close(); err == nil {
			err = closeErr
		}
		if err != nil || resp.StatusCode != answer {
			return 0, fmt.Errorf("answered %s (%v), want %d", resp.Status, err, answer)
		}
	}
	n, err := io.Copy(io.Discard, r)
	took := time.Since(start)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return took, fmt.Errorf("still open after %s", took.Round(time.Millisecond))
	case n > 0:
		return took, fmt.Errorf("%d more bytes before the end", n)
	}
	// The end of the stream (nil from io.Copy) or a reset: closed.
	return took, nil
}

// Headers past the bound are refused with 431 before any handler runs.
func TestLargeHeadersAreRefused(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	req, err := http.NewRequest("GET", s.url+replicasPath(ns, "any", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("x", 2*di.MaxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Error(err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("answered %s, want 431", resp.Status)
	}
}
