//go:build e2e

package diserver

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	di "github.com/trainfn/trainfn/reconciler/diserver"
	"github.com/trainfn/trainfn/render/handoff"
)

// stored reads the profilings annotation of a workload, live.
func stored(t *testing.T, obj client.Object) (di.Profilings, bool) {
	t.Helper()
	now := obj.DeepCopyObject().(client.Object)
	get(t, now)
	value, ok := now.GetAnnotations()[handoff.Profilings]
	p, err := di.ParseProfilings(value)
	if err != nil {
		t.Fatalf("%s: %v", obj.GetName(), err)
	}
	owned := false
	for _, f := range now.GetManagedFields() {
		owned = owned || f.Manager == di.FieldManager
	}
	if ok && !owned {
		t.Errorf("%s: the profilings were not written as %s", obj.GetName(), di.FieldManager)
	}
	return p, ok
}

func postProfilings(t *testing.T, c *caller, path, body string) {
	t.Helper()
	if a := c.call(t, "POST", path, body); a.status != http.StatusOK || a.Data != nil {
		t.Fatalf("posting %s: %v", body, a)
	}
}

// A task-shaped job's profilings land on its workload of first rank 0,
// with the throughput at the job's count across its tasks.
func TestProfilingsOfATaskShapedJob(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	learner := task{job: "league", name: "learner", generation: 1, firstRank: 2, parallelism: 1}.create(t, ns)
	collector := task{job: "league", name: "collector", generation: 1, firstRank: 0, parallelism: 2}.create(t, ns)
	path := profilingsPath(ns, "league", 1)
	c := s.fromPodOf(t, learner)

	postProfilings(t, c, path, `{"data": {"throughput": 10.5, "step": 100}}`)
	p, ok := stored(t, collector)
	if !ok {
		t.Fatalf("%s holds no profilings", collector.Name)
	}
	if string(p.Data) != `{"throughput":10.5,"step":100}` || len(p.Throughput) != 1 || p.Throughput[3] != 10.5 {
		t.Errorf("stored %s", p)
	}
	if _, ok := stored(t, learner); ok {
		t.Errorf("%s, of first rank 2, holds profilings too", learner.Name)
	}

	// Posts one right after another, and at once: a post that starts from
	// a copy of the Job the cache has not updated yet, or that another
	// changed meanwhile, reads it again and lands.
	for i := range 10 {
		postProfilings(t, c, path, fmt.Sprintf(`{"data": {"step": %d}}`, i))
	}
	var done sync.WaitGroup
	answers := make([]answer, 4)
	for i := range answers {
		done.Go(func() {
			var err error
			if answers[i], err = c.try("POST", path, fmt.Sprintf(`{"data": {"throughput": %d}}`, i)); err != nil {
				answers[i].Message = err.Error()
			}
		})
	}
	done.Wait()
	for _, a := range answers {
		if a.status != http.StatusOK {
			t.Errorf("a concurrent post failed: %v", a)
		}
	}
	t.Logf("what the posts asked of the API server:\n%s", s.requests)
}

// A preemptible job's throughput is kept per worker count, the latest at
// each; the data is always the latest.
func TestProfilingsMergeAcrossCounts(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	set := preemptible{name: "atari", generation: 5, bounds: "1:4", replicas: 2}.create(t, ns)
	path := profilingsPath(ns, "atari", 5)
	c := s.fromPodOf(t, set)

	postProfilings(t, c, path, `{"data": {"throughput": 5}}`)
	if a := c.call(t, "POST", replicasPath(ns, "atari", 5), `{"replicas": 1}`); a.status != http.StatusOK {
		t.Fatalf("adding a worker: %v", a)
	}
	postProfilings(t, c, path, `{"data": {"throughput": 7.5}}`)
	postProfilings(t, c, path, `{"data": {"note": "no throughput"}}`)
	p, _ := stored(t, set)
	if string(p.Data) != `{"note":"no throughput"}` || len(p.Throughput) != 2 || p.Throughput[2] != 5 || p.Throughput[3] != 7.5 {
		t.Errorf("stored %s; want the last data and throughput 5 at 2 workers, 7.5 at 3", p)
	}

	// A later report at a count replaces that count's only.
	postProfilings(t, c, path, `{"data": {"throughput": 8}}`)
	p, _ = stored(t, set)
	if len(p.Throughput) != 2 || p.Throughput[2] != 5 || p.Throughput[3] != 8 {
		t.Errorf("stored %s; want throughput 5 at 2 workers, 8 at 3", p)
	}
	requireReplicas(t, set, 3)
}
