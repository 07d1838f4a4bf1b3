//go:build e2e

package diserver

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Every refused request leaves the job's objects as they were: the same
// resourceVersion before and after.
func TestRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	ns, elsewhere := kube.Namespace(t), kube.Namespace(t)
	s := serveAPI(t, ns, serving{served: []string{ns}})
	elastic := preemptible{name: "elastic", generation: 3, bounds: "1:3", replicas: 2}.create(t, ns)
	starting := preemptible{name: "starting", generation: 1, bounds: "1:3", replicas: 1, starting: true}.create(t, ns)
	fixed := task{job: "fixed", name: "worker", generation: 1, firstRank: 0, parallelism: 2}.create(t, ns)
	unserved := preemptible{name: "elastic", generation: 3, bounds: "1:3", replicas: 1}.create(t, elsewhere)
	waitPods(t, elastic, 2)
	waitPods(t, starting, 1)
	waitPods(t, fixed, 2)
	waitPods(t, unserved, 1)
	objs := []client.Object{elastic, starting, fixed, unserved}
	before := settled(t, objs...)
	fromElastic, fromStarting, fromFixed := s.fromPodOf(t, elastic), s.fromPodOf(t, starting), s.fromPodOf(t, fixed)
	fromNoPod := s.from("127.0.0.1")

	big := `{"data": {"blob": "` + strings.Repeat("x", 64<<10) + `"}}`
	for _, tc := range []struct {
		from               *caller
		method, path, body string
		status             int
		mentions           string
	}{
		{fromElastic, "POST", replicasPath(ns, "elastic", 3), `{"replicas": 2}`, http.StatusUnprocessableEntity, "cannot add 2 workers: the job has 2 and must keep between 1 and 3"},
		{fromElastic, "DELETE", replicasPath(ns, "elastic", 3), `{"replicas": 2}`, http.StatusUnprocessableEntity, "cannot remove 2 workers: the job has 2 and must keep between 1 and 3"},
		{fromElastic, "POST", replicasPath(ns, "elastic", 3), ``, http.StatusBadRequest, "body: missing"},
		{fromElastic, "POST", replicasPath(ns, "elastic", 3), `{"replicas": 0}`, http.StatusBadRequest, "replicas: must be at least 1"},
		{fromElastic, "DELETE", replicasPath(ns, "elastic", 3), `{"replicas": -1}`, http.StatusBadRequest, "replicas: must be at least 1"},
		{fromElastic, "POST", replicasPath(ns, "elastic", 3), `{"replicas": "1"}`, http.StatusBadRequest, "replicas: want an integer"},
		{fromElastic, "POST", replicasPath(ns, "elastic", 3), `{"replicas": 1.5}`, http.StatusBadRequest, "replicas: want an integer"},
		{fromElastic, "POST", replicasPath(ns, "elastic", 3), `{"replicas": 1, "force": true}`, http.StatusBadRequest, `unknown field "force"`},
		{fromElastic, "POST", replicasPath(ns, "elastic", 3), `replicas=1`, http.StatusBadRequest, "not JSON"},
		{fromElastic, "PUT", replicasPath(ns, "elastic", 3), `{"replicas": 1}`, http.StatusMethodNotAllowed, "method not allowed"},
		{fromElastic, "POST", "/v2alpha1/" + ns + ".elastic/replicas", `{"replicas": 1}`, http.StatusBadRequest, "job_id"},
		{fromElastic, "POST", replicasPath(ns, "elastic", 2), `{"replicas": 1}`, http.StatusNotFound, "at generation 3, not 2"},
		{fromElastic, "DELETE", replicasPath(ns, "elastic", 4), `{"replicas": 1}`, http.StatusNotFound, "at generation 3, not 4"},
		{fromElastic, "GET", replicasPath(ns, "elastic", 2), ``, http.StatusNotFound, "at generation 3, not 2"},
		{fromFixed, "POST", replicasPath(ns, "fixed", 1), `{"replicas": 1}`, http.StatusConflict, "is not preemptible"},
		{fromFixed, "DELETE", replicasPath(ns, "fixed", 1), `{"replicas": 1}`, http.StatusConflict, "is not preemptible"},
		{fromStarting, "POST", replicasPath(ns, "starting", 1), `{"replicas": 1}`, http.StatusConflict, "has not set its first worker count yet"},
		{fromElastic, "POST", replicasPath(elsewhere, "elastic", 3), `{"replicas": 1}`, http.StatusNotFound, "is not served here"},
		{fromElastic, "POST", profilingsPath(elsewhere, "elastic", 3), `{"data": {"throughput": 1}}`, http.StatusNotFound, "is not served here"},
		{fromElastic, "POST", profilingsPath(ns, "elastic", 3), `{"data": [1, 2]}`, http.StatusBadRequest, "data: must be a JSON object"},
		{fromElastic, "POST", profilingsPath(ns, "elastic", 3), `{"throughput": 1}`, http.StatusBadRequest, `unknown field "throughput"`},
		{fromElastic, "POST", profilingsPath(ns, "elastic", 3), big, http.StatusRequestEntityTooLarge, "larger than 65536 bytes"},
		{fromElastic, "POST", profilingsPath(ns, "elastic", 1), `{"data": {"throughput": 1}}`, http.StatusNotFound, "at generation 3, not 1"},
		// Only a job's own pods may call about it: a job that does not
		// exist has none.
		{fromElastic, "POST", profilingsPath(ns, "nonesuch", 3), `{"data": {"throughput": 1}}`, http.StatusForbidden, "from none of the job's pods"},
		{fromElastic, "GET", replicasPath(ns, "nonesuch", 1), ``, http.StatusForbidden, "from none of the job's pods"},
		{fromFixed, "POST", replicasPath(ns, "elastic", 3), `{"replicas": 1}`, http.StatusForbidden, "from none of the job's pods"},
		{fromNoPod, "DELETE", replicasPath(ns, "elastic", 3), `{"replicas": 1}`, http.StatusForbidden, "from none of the job's pods"},
		{fromNoPod, "POST", profilingsPath(ns, "elastic", 3), `{"data": {"throughput": 1}}`, http.StatusForbidden, "from none of the job's pods"},
	} {
		t.Run(fmt.Sprintf("%s %s %.20s from %s", tc.method, tc.path, tc.body, tc.from.from), func(t *testing.T) {
			a := tc.from.call(t, tc.method, tc.path, tc.body)
			if a.status != tc.status || !strings.Contains(a.Message, tc.mentions) {
				t.Errorf("answered %v; want %d, saying %q", a, tc.status, tc.mentions)
			}
			if a.Data != nil {
				t.Errorf("a refusal carries data: %v", a)
			}
			if after := versions(t, objs...); !maps.Equal(before, after) {
				t.Errorf("the objects changed: resourceVersions %v, then %v", before, after)
			}
		})
	}
	// A refusal for the job's bounds is read from the cache, then once
	// live; nothing is written.
	if got := s.requests.String(); strings.Contains(got, "PATCH") {
		t.Errorf("a refused request wrote:\n%s", got)
	}
}

// quiet is how long the objects must stay unchanged to count as settled:
// longer than the Job controller's batching of pod updates (a second).
const quiet = 3 * time.Second

// settled waits until the objects' controllers and kwok have stopped
// writing to them, and returns their resourceVersions by name.
func settled(t *testing.T, objs ...client.Object) map[string]string {
	t.Helper()
	var last map[string]string
	var since time.Time
	eventually(t, "the objects settle", func(context.Context) error {
		now := versions(t, objs...)
		if !maps.Equal(last, now) {
			last, since = now, time.Now()
		}
		if unchanged := time.Since(since); unchanged < quiet {
			return fmt.Errorf("unchanged for %s only: %v", unchanged.Round(time.Millisecond), now)
		}
		return nil
	})
	return last
}

func versions(t *testing.T, objs ...client.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, obj := range objs {
		now := obj.DeepCopyObject().(client.Object)
		get(t, now)
		out[now.GetNamespace()+"/"+now.GetName()] = now.GetResourceVersion()
	}
	return out
}
