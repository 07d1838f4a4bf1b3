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
func listedAddresses(t *testing.T, s *api, path string, want []string) {
	t.Helper()
	eventually(t, "GET "+path+" lists "+fmt.Sprint(want), func(context.Context) error {
		a := s.call(t, "GET", path, "")
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
	s := serveAPI(t, ns)
	set := preemptible{name: "cartpole", generation: 1, bounds: "1:4", replicas: 3}.create(t, ns)
	listedAddresses(t, s, replicasPath(ns, "cartpole", 1), waitPods(t, set, 3))
}

// A task-shaped job's ranks run on across its Jobs, in the order of their
// first ranks, whatever the order of their names.
func TestListReplicasAcrossTasks(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns)
	learner := task{job: "league", name: "a-learner", generation: 4, firstRank: 2, parallelism: 1}.create(t, ns)
	collector := task{job: "league", name: "b-collector", generation: 4, firstRank: 0, parallelism: 2}.create(t, ns)
	want := append(waitPods(t, collector, 2), waitPods(t, learner, 1)...)
	listedAddresses(t, s, replicasPath(ns, "league", 4), want)
}

func TestAddAndRemoveWorkers(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns)
	set := preemptible{name: "pong", generation: 2, bounds: "1:4", replicas: 2}.create(t, ns)
	path := replicasPath(ns, "pong", 2)
	waitPods(t, set, 2)

	a := s.call(t, "POST", path, `{"replicas": 2}`)
	if a.status != http.StatusOK {
		t.Fatalf("adding 2 workers: %v", a)
	}
	if want := []string{"pong-worker-2.pong:22270", "pong-worker-3.pong:22270"}; !slices.Equal(a.hosts(t), want) {
		t.Errorf("added %q, want %q", a.hosts(t), want)
	}
	requireReplicas(t, set, 4)
	listedAddresses(t, s, path, waitPods(t, set, 4))

	a = s.call(t, "DELETE", path, `{"replicas": 3}`)
	if a.status != http.StatusOK {
		t.Fatalf("removing 3 workers: %v", a)
	}
	if want := []string{"pong-worker-1.pong:22270", "pong-worker-2.pong:22270", "pong-worker-3.pong:22270"}; !slices.Equal(a.hosts(t), want) {
		t.Errorf("removed %q, want %q", a.hosts(t), want)
	}
	requireReplicas(t, set, 1)
	listedAddresses(t, s, path, waitPods(t, set, 1))
}

// Concurrent requests each move the count from where the last one left
// it: none is lost to another read of the same count.
func TestConcurrentAddsAllLand(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns)
	const concurrent = 4
	set := preemptible{name: "breakout", generation: 1, bounds: "1:8", replicas: 2}.create(t, ns)
	path := replicasPath(ns, "breakout", 1)
	waitPods(t, set, 2)

	answers := make([]answer, concurrent)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range concurrent {
		done.Go(func() {
			start.Wait()
			answers[i] = s.call(t, "POST", path, `{"replicas": 1}`)
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
