// Package closingtest checks what a caller sees when a server refuses its
// request before reading its body: the answer, and a connection that
// takes the rest of the body and then ends cleanly. A server that closes
// the connection with the body still coming makes the kernel reset it, and
// the caller then gets "broken pipe" or "connection reset" instead of the
// answer (RFC 9112, section 9.6, on closing a connection).
package closingtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// chunk is what the caller sends of its body at a time, once answered.
const chunk = 16 << 10

// pause lets the server's close, if it closes early, reach the caller
// between two writes, so that the reset it causes fails the next one.
const pause = 5 * time.Millisecond

// Answer is what the caller read.
type Answer struct {
	Status int
	Header http.Header
	Body   string
	// Close is whether the server said it closes the connection.
	Close bool
}

// SendingAfterTheAnswer serves srv on a loopback port and sends it a
// request with a body of length bytes (its headers, then one byte), reads
// the answer, then sends the rest of the body. It fails t if a write of the
// body fails or the connection ends other than cleanly, and returns the
// answer for the caller to check.
func SendingAfterTheAnswer(t *testing.T, srv *http.Server, method, path string, header http.Header, length int) Answer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", method, path, ln.Addr(), length)
	_ = header.Write(&head)
	head.WriteString("\r\n{")
	if _, err := io.WriteString(conn, head.String()); err != nil {
		t.Fatal(err)
	}

	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("the answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatalf("the answer's body: %v", err)
	}
	answer := Answer{Status: resp.StatusCode, Header: resp.Header, Body: string(body), Close: resp.Close}

	rest := []byte(strings.Repeat("x", length-1))
	for len(rest) > 0 {
		n := min(chunk, len(rest))
		if _, err := conn.Write(rest[:n]); err != nil {
			t.Fatalf("answered %d, the body's rest, %d bytes to go: %v", answer.Status, len(rest), err)
		}
		rest = rest[n:]
		time.Sleep(pause)
	}
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("answered %d, then the connection: %v, want it closed cleanly", answer.Status, err)
	}
	return answer
}
