package progress

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/render/handoff"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestJobOfEachKindsPath(t *testing.T) {
	for path, want := range map[string]observed.Key{
		"kubeflow.org/v2beta1/a/mpijobs/pi":             {Namespace: "a", Kind: handoff.MPIJobKind, Name: "pi"},
		"kubeflow.org/v1/a/mpijobs/pi":                  {Namespace: "a", Kind: handoff.MPIJobKind, Name: "pi"},
		"kubeflow.org/v1/a/pytorchjobs/pi":              {Namespace: "a", Kind: handoff.PyTorchJobKind, Name: "pi"},
		"diengine.opendilab.org/v2alpha1/a/dijobs/pi":   {Namespace: "a", Kind: handoff.DIJobKind, Name: "pi"},
		"trainer.kubeflow.org/v1alpha1/a/trainjobs/pi":  {Namespace: "a", Kind: TrainJobKind, Name: "pi"},
		"kubeflow.org/v1alpha1/a/pytorchjobs/pi":        {},
		"trainer.kubeflow.org/v1/a/trainjobs/pi":        {},
		"kubeflow.org/v1/a/tfjobs/pi":                   {},
		"apps/v1/a/statefulsets/pi":                     {},
		"kubeflow.org/v1/A_B/pytorchjobs/pi":            {},
		"kubeflow.org/v1/a/pytorchjobs/" + "Not..Valid": {},
	} {
		p := strings.Split(path, "/")
		got, ok := jobOf(p[0], p[1], p[3], p[2], p[4])
		assert.Equal(t, want != observed.Key{}, ok, path)
		assert.Equal(t, want, got, path)
	}
}

// TestOtherRoutesAreNotFound: only POST of a job's status path is served;
// anything else is 404 before any review, as a metav1.Status.
func TestOtherRoutesAreNotFound(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	h, err := New(Config{Cache: fake.NewClientBuilder().Build(), Writer: fake.NewClientBuilder().Build(), Metrics: m})
	require.NoError(t, err)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/apis/kubeflow.org/v1/namespaces/a/pytorchjobs/pi/status"},
		{http.MethodPut, "/apis/kubeflow.org/v1/namespaces/a/pytorchjobs/pi/status"},
		{http.MethodPost, "/apis/kubeflow.org/v1/namespaces/a/pytorchjobs/pi"},
		{http.MethodPost, "/apis/kubeflow.org/v1/namespaces/a/tfjobs/pi/status"},
		{http.MethodPost, "/metrics"},
		{http.MethodPost, "/"},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(c.method, c.path, strings.NewReader(`{}`)))
		assert.Equal(t, http.StatusNotFound, w.Code, "%s %s", c.method, c.path)
		var s metav1.Status
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &s), "%s %s", c.method, c.path)
		assert.Equal(t, metav1.StatusReasonNotFound, s.Reason)
	}
	var answered dto.Metric
	require.NoError(t, m.Reports.WithLabelValues("404").Write(&answered))
	assert.Equal(t, 6.0, answered.GetCounter().GetValue())
}

// TestUnauthenticatedIsForbidden: a request with no token, or not a
// bearer one, is refused before the API server is asked anything.
func TestUnauthenticatedIsForbidden(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	h, err := New(Config{Cache: fake.NewClientBuilder().Build(), Writer: fake.NewClientBuilder().Build(), Metrics: m})
	require.NoError(t, err)
	for _, auth := range []string{"", "Basic dXNlcjpwYXNz", "Bearer ", "Bearer a b"} {
		r := httptest.NewRequest(http.MethodPost, "/apis/kubeflow.org/v1/namespaces/a/pytorchjobs/pi/status", strings.NewReader(`{}`))
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusForbidden, w.Code, auth)
	}
}

func TestJobBucketsBoundEachJob(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newJobBuckets(1, 3, func() time.Time { return now })
	pi, other := observed.Key{Namespace: "a", Kind: "PyTorchJob", Name: "pi"}, observed.Key{Namespace: "a", Kind: "PyTorchJob", Name: "other"}
	for range 3 {
		require.Nil(t, b.take(pi))
	}
	refused := b.take(pi)
	require.NotNil(t, refused, "past the burst")
	assert.Equal(t, int32(http.StatusTooManyRequests), refused.status.Code)
	assert.Equal(t, 1, refused.retryAfter)
	assert.Nil(t, b.take(other), "another job has a bucket of its own")
	now = now.Add(time.Second)
	assert.Nil(t, b.take(pi), "a token a second")
	assert.NotNil(t, b.take(pi))
}

// The buckets stay at most maxKeyedBuckets, forgetting the full ones
// first: a job whose bucket is not full keeps it, and its count.
func TestJobBucketsAreBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newJobBuckets(1, 3, func() time.Time { return now })
	busy := observed.Key{Namespace: "a", Kind: "PyTorchJob", Name: "busy"}
	for range 3 {
		require.Nil(t, b.take(busy))
	}
	for i := range maxKeyedBuckets + 10 {
		require.Nil(t, b.take(observed.Key{Namespace: "a", Kind: "PyTorchJob", Name: "job-" + strconv.Itoa(i)}), "a new job's bucket is full")
		assert.LessOrEqual(t, len(b.buckets), maxKeyedBuckets)
	}
	// Every other bucket still holds two of its three tokens: none is
	// full, and the map is kept its size by forgetting at random; the busy
	// job's empty bucket was either kept, and refuses, or forgotten.
	if _, kept := b.buckets[busy]; kept {
		assert.NotNil(t, b.take(busy), "a bucket kept keeps its count")
	}
	now = now.Add(time.Hour)
	require.Nil(t, b.take(observed.Key{Namespace: "a", Kind: "PyTorchJob", Name: "new"}))
	assert.Len(t, b.buckets, 1, "an hour on, every bucket is full and forgotten for a new one")
}

func TestBoundPodNeedsOurAudienceAndAPod(t *testing.T) {
	good := func() authenticationStatus {
		return authenticationStatus{
			Authenticated: true, Audiences: []string{Audience},
			User: userInfo{Username: "system:serviceaccount:a:default", Extra: map[string]extraValue{
				podNameExtra: {"pi-worker-0"}, podUIDExtra: {"uid-1"}}},
		}
	}
	assert.Equal(t, reviewedPod{namespace: "a", name: "pi-worker-0", uid: "uid-1"}, boundPod(good()))
	for name, change := range map[string]func(*authenticationStatus){
		"not authenticated": func(s *authenticationStatus) { s.Authenticated = false },
		"no audience":       func(s *authenticationStatus) { s.Audiences = nil },
		"another audience":  func(s *authenticationStatus) { s.Audiences = []string{"https://kubernetes.default.svc"} },
		"not bound to a pod": func(s *authenticationStatus) {
			delete(s.User.Extra, podNameExtra)
			delete(s.User.Extra, podUIDExtra)
		},
		"no pod UID":            func(s *authenticationStatus) { delete(s.User.Extra, podUIDExtra) },
		"two pod names":         func(s *authenticationStatus) { s.User.Extra[podNameExtra] = []string{"pi-worker-0", "pi-worker-1"} },
		"two pod UIDs":          func(s *authenticationStatus) { s.User.Extra[podUIDExtra] = []string{"uid-1", "uid-2"} },
		"not a service account": func(s *authenticationStatus) { s.User.Username = "alice" },
		"a node":                func(s *authenticationStatus) { s.User.Username = "system:node:node-1" },
		"a service account's name with a colon": func(s *authenticationStatus) {
			s.User.Username = "system:serviceaccount:a:default:x"
		},
		"a user named like a service account": func(s *authenticationStatus) { s.User.Username = "system:serviceaccounts:a:default" },
	} {
		s := good()
		change(&s)
		assert.Equal(t, reviewedPod{}, boundPod(s), name)
	}
}

type (
	authenticationStatus = authenticationv1.TokenReviewStatus
	userInfo             = authenticationv1.UserInfo
	extraValue           = authenticationv1.ExtraValue
)
