//go:build e2e

package diserver

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	di "github.com/trainfn/trainfn/reconciler/diserver"
)

// What the job's pods ask costs the API server a bounded number of
// requests: reads none (they are answered from the cache), and writes at
// most MaxRequestsPerWrite for each the write bucket admits, which admits
// its burst and then its rate; the others are answered 429 with
// Retry-After. Sixteen callers writing one StatefulSet at once, which the
// StatefulSet controller updates too, race: a write that loses every try
// is answered 503, retry.
func TestRequestsCostTheAPIServerABoundedNumber(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	policy := di.Policy{WriteRate: 20, WriteBurst: 20}
	s := serveAPI(t, ns, serving{policy: policy})
	set := preemptible{name: "busy", generation: 1, bounds: "1:4", replicas: 2}.create(t, ns)
	c := s.fromPodOf(t, set)
	replicas, profilings := replicasPath(ns, "busy", 1), profilingsPath(ns, "busy", 1)

	before := s.requests.total()
	for range 500 {
		if a := c.call(t, "GET", replicas, ""); a.status != http.StatusOK {
			t.Fatalf("GET: %v", a)
		}
	}
	if n := s.requests.total() - before; n != 0 {
		t.Fatalf("500 GETs asked the API server %d times:\n%s", n, s.requests)
	}

	const requests, concurrent = 2000, 16
	mix := []struct{ method, path, body string }{
		{"GET", replicas, ""},
		{"POST", replicas, `{"replicas": 1}`},
		{"DELETE", replicas, `{"replicas": 1}`},
		{"POST", profilings, `{"data": {"throughput": 1.5}}`},
	}
	var mu sync.Mutex
	statuses := map[string]int{}
	var wrongRetryAfter []string
	work := make(chan int)
	var done sync.WaitGroup
	start := time.Now()
	for range concurrent {
		done.Go(func() {
			for i := range work {
				r := mix[i%len(mix)]
				a, err := c.try(r.method, r.path, r.body)
				mu.Lock()
				if err != nil {
					statuses[err.Error()]++
				} else {
					statuses[fmt.Sprintf("%s %s %d", r.method, r.path[strings.LastIndexByte(r.path, '/'):], a.status)]++
					if a.status == http.StatusTooManyRequests && a.header.Get("Retry-After") == "" {
						wrongRetryAfter = append(wrongRetryAfter, a.String())
					}
				}
				mu.Unlock()
			}
		})
	}
	for i := range requests {
		work <- i
	}
	close(work)
	done.Wait()
	elapsed := time.Since(start)
	asked := s.requests.total() - before

	admissible := float64(policy.WriteBurst) + policy.WriteRate*elapsed.Seconds()
	bound := int(math.Ceil(admissible)) * di.MaxRequestsPerWrite
	t.Logf("%d requests, %d at a time, in %s: %d requests to the API server (at most %d: %.0f admissible writes, %d requests each)\n%s\nanswers:\n%s",
		requests, concurrent, elapsed.Round(time.Millisecond), asked, bound, admissible, di.MaxRequestsPerWrite, s.requests, listed(statuses))
	if asked > bound {
		t.Errorf("the API server was asked %d times, more than %d", asked, bound)
	}
	tooMany := 0
	for what, n := range statuses {
		if strings.HasSuffix(what, " 429") {
			tooMany += n
		}
		if !strings.HasSuffix(what, " 200") && !strings.HasSuffix(what, " 422") && !strings.HasSuffix(what, " 429") &&
			!strings.HasSuffix(what, " 503") {
			t.Errorf("%d answered %s", n, what)
		}
	}
	// The bucket bites only when the writes come faster than it admits: on
	// a machine busy enough to send fewer, none need be refused.
	writes := requests * 3 / 4
	switch {
	case float64(writes) > admissible && tooMany == 0:
		t.Errorf("no write was answered 429: %d writes in %s, at most %.0f admissible", writes, elapsed, admissible)
	case float64(writes) <= admissible:
		t.Logf("%d writes in %s came no faster than the %.0f the bucket admits: whether it refuses the rest is not tried", writes, elapsed, admissible)
	}
	if len(wrongRetryAfter) > 0 {
		t.Errorf("429s without Retry-After: %v", wrongRetryAfter)
	}
}

func listed(counts map[string]int) string {
	var lines []string
	for what, n := range counts {
		lines = append(lines, fmt.Sprintf("%6d %s", n, what))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
