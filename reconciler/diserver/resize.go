package diserver

import (
	"net/http"

	"github.com/trainfn/trainfn/render/handoff"
)

// resize is the worker count a request asks for: current moved by delta
// (negative to remove), which must land within the job's bounds. The
// request is refused whole rather than clamped: a caller that asked for
// three workers and got one would never know.
func resize(current int32, delta int64, b handoff.Bounds) (int32, *requestError) {
	// No job has more than MaxWorkers, which also keeps the sum from
	// overflowing.
	if delta >= -handoff.MaxWorkers && delta <= handoff.MaxWorkers {
		if want := int64(current) + delta; want >= int64(b.Min) && want <= int64(b.Max) {
			return int32(want), nil
		}
	}
	verb, n := "add", delta
	if delta < 0 {
		verb, n = "remove", -delta
	}
	return 0, fail(http.StatusUnprocessableEntity,
		"replicas: cannot %s %d %s: the job has %d and must keep between %d and %d",
		verb, n, plural(n, "worker"), current, b.Min, b.Max)
}

func plural(n int64, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
