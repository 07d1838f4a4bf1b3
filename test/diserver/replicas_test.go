//go:build e2e

package diserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
)

// listedAddresses waits until GET .../replicas lists want.
func listedAddresses(t *testing.T, c *caller, path string, want []string) {
	t.Helper()
	eventually(t, "GET "+path+" lists "+fmt.Sprint(want), func(context.Context) error {
		a := c.call(t, "GET", path, "")
		if a.status != http.StatusOK {
			return fmt.Errorf("%v", a)
		}
		if got := a.hosts(t); !slices.Equal(got, want) {
			return fmt.Errorf("listed %q", got)
		}
		return nil
	})
}

func TestListReplicasOfAPreemptibleJob(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	set := preemptible{name: "cartpole", generation: 1, bounds: "1:4", replicas: 3}.create(t, ns)
	listedAddresses(t, s.fromPodOf(t, set), replicasPath(ns, "cartpole", 1), waitPods(t, set, 3))
}

// A task-shaped job's ranks run on across its Jobs, in the order of their
// first ranks, whatever the order of their names.
func TestListReplicasAcrossTasks(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	learner := task{job: "league", name: "a-learner", generation: 4, firstRank: 2, parallelism: 1}.create(t, ns)
	collector := task{job: "league", name: "b-collector", generation: 4, firstRank: 0, parallelism: 2}.create(t, ns)
	want := append(waitPods(t, collector, 2), waitPods(t, learner, 1)...)
	// Any task's pod may call.
	listedAddresses(t, s.fromPodOf(t, learner), replicasPath(ns, "league", 4), want)
}

func TestAddAndRemoveWorkers(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	set := preemptible{name: "pong", generation: 2, bounds: "1:4", replicas: 2}.create(t, ns)
	path := replicasPath(ns, "pong", 2)
	waitPods(t, set, 2)
	c := s.fromPodOf(t, set)

	a := c.call(t, "POST", path, `{"replicas": 2}`)
	if a.status != http.StatusOK {
		t.Fatalf("adding 2 workers: %v", a)
	}
	if want := []string{"pong-worker-2.pong:22270", "pong-worker-3.pong:22270"}; !slices.Equal(a.hosts(t), want) {
		t.Errorf("added %q, want %q", a.hosts(t), want)
	}
	requireReplicas(t, set, 4)
	listedAddresses(t, c, path, waitPods(t, set, 4))

	a = c.call(t, "DELETE", path, `{"replicas": 3}`)
	if a.status != http.StatusOK {
		t.Fatalf("removing 3 workers: %v", a)
	}
	if want := []string{"pong-worker-1.pong:22270", "pong-worker-2.pong:22270", "pong-worker-3.pong:22270"}; !slices.Equal(a.hosts(t), want) {
		t.Errorf("removed %q, want %q", a.hosts(t), want)
	}
	requireReplicas(t, set, 1)
	listedAddresses(t, c, path, waitPods(t, set, 1))
}

// A caller's change is the count its next request starts from, though the
// cache may not have it yet: at its bound, a job is shrunk and grown back
// in turn, each request at once after the last, and none is refused.
func TestEachChangeStartsFromTheLast(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	set := preemptible{name: "seaquest", generation: 1, bounds: "1:2", replicas: 2}.create(t, ns)
	path := replicasPath(ns, "seaquest", 1)
	c := s.fromPodOf(t, set)
	for i := range 10 {
		for _, method := range []string{"DELETE", "POST"} {
			if a := c.call(t, method, path, `{"replicas": 1}`); a.status != http.StatusOK {
				t.Fatalf("round %d: %s: %v", i, method, a)
			}
		}
	}
	requireReplicas(t, set, 2)
}

// Concurrent requests each move the count from where the last one left
// it: none is lost to another read of the same count.
func TestConcurrentAddsAllLand(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	const concurrent = 4
	set := preemptible{name: "breakout", generation: 1, bounds: "1:8", replicas: 2}.create(t, ns)
	path := replicasPath(ns, "breakout", 1)
	waitPods(t, set, 2)
	c := s.fromPodOf(t, set)

	answers := make([]answer, concurrent)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range concurrent {
		done.Go(func() {
			start.Wait()
			answers[i] = c.call(t, "POST", path, `{"replicas": 1}`)
		})
	}
	start.Done()
	done.Wait()
	var added []string
	for _, a := range answers {
		if a.status != http.StatusOK {
			t.Fatalf("a concurrent POST failed: %v", a)
		}
		added = append(added, a.hosts(t)...)
	}
	slices.Sort(added)
	want := []string{"breakout-worker-2.breakout:22270", "breakout-worker-3.breakout:22270",
		"breakout-worker-4.breakout:22270", "breakout-worker-5.breakout:22270"}
	if !slices.Equal(added, want) {
		t.Errorf("the concurrent POSTs added %q, want each of %q once", added, want)
	}
	requireReplicas(t, set, 2+concurrent)
	waitPods(t, set, 2+concurrent)
}

// requireReplicas checks the StatefulSet's replicas, read live.
func requireReplicas(t *testing.T, set *appsv1.StatefulSet, want int32) {
	t.Helper()
	now := set.DeepCopy()
	get(t, now)
	if got := ptr.Deref(now.Spec.Replicas, -1); got != want {
		t.Fatalf("StatefulSet %s has %d replicas, want %d", now.Name, got, want)
	}
}
