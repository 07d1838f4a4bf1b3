package main

import "io"

// heldOutput keeps what is written to it until it is passed on whole. It
// holds the bytes in chunks: a growing buffer would copy a render's output
// as it doubles, and the output can be as large as the input.
type heldOutput struct{ chunks [][]byte }

const heldChunk = 1 << 20

func (h *heldOutput) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		last := len(h.chunks) - 1
		if last < 0 || len(h.chunks[last]) == cap(h.chunks[last]) {
			h.chunks = append(h.chunks, make([]byte, 0, heldChunk))
			last++
		}
		room := cap(h.chunks[last]) - len(h.chunks[last])
		take := min(room, len(p))
		h.chunks[last] = append(h.chunks[last], p[:take]...)
		p = p[take:]
	}
	return n, nil
}

func (h *heldOutput) writeTo(w io.Writer) error {
	for _, c := range h.chunks {
		if _, err := w.Write(c); err != nil {
			return err
		}
	}
	return nil
}
