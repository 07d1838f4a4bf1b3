package diserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// untouchable fails the test on any call: the requests given to it are
// refused before the API server is asked anything.
type untouchable struct {
	client.Client
	t *testing.T
}

func (u untouchable) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	u.t.Error("the API server was read")
	return errors.New("untouchable")
}

func (u untouchable) List(context.Context, client.ObjectList, ...client.ListOption) error {
	u.t.Error("the API server was read")
	return errors.New("untouchable")
}

func serve(t *testing.T, h http.Handler, method, path, body string) (*httptest.ResponseRecorder, Response) {
	t.Helper()
	return serveFrom(t, h, "", method, path, body)
}

// serveFrom serves a request sent from remote ("ip:port"; httptest's
// 192.0.2.1:1234 when empty).
func serveFrom(t *testing.T, h http.Handler, remote, method, path, body string) (*httptest.ResponseRecorder, Response) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if remote != "" {
		req.RemoteAddr = remote
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var got Response
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), rec.Body.String())
	return rec, got
}

type refusedRequest struct {
	method, path, body string
	status             int
	mentions           string
}

func requireRefused(t *testing.T, h http.Handler, tc refusedRequest) *httptest.ResponseRecorder {
	t.Helper()
	rec, got := serve(t, h, tc.method, tc.path, tc.body)
	require.Equal(t, tc.status, rec.Code, got.Message)
	require.False(t, got.Success)
	require.Equal(t, CodeFailed, got.Code)
	require.Nil(t, got.Data)
	require.Contains(t, got.Message, tc.mentions)
	return rec
}

// Requests refused for their path, method, job_id or namespace are refused
// before anything is read, even the cache.
func TestRequestsRefusedBeforeReadingTheCluster(t *testing.T) {
	u := untouchable{t: t}
	metrics := NewMetrics(prometheus.NewRegistry())
	h, err := New(Config{Cache: u, Live: u, Writer: u, Namespaces: []string{"team-a"}, Log: logr.Discard(), Metrics: metrics})
	require.NoError(t, err)
	for _, tc := range []refusedRequest{
		{"PUT", "/v2alpha1/team-a.j.1/replicas", `{"replicas": 1}`, http.StatusMethodNotAllowed, "PUT /v2alpha1/team-a.j.1/replicas: method not allowed"},
		{"PATCH", "/v2alpha1/team-a.j.1/replicas", `{"replicas": 1}`, http.StatusMethodNotAllowed, "use GET, HEAD, POST, DELETE"},
		{"GET", "/v2alpha1/team-a.j.1/profilings", ``, http.StatusMethodNotAllowed, "use POST"},
		{"GET", "/v2alpha1/team-a.j.1/other", ``, http.StatusNotFound, "no such path"},
		{"GET", "/", ``, http.StatusNotFound, "no such path"},
		{"GET", "/v2alpha1/team-a.j/replicas", ``, http.StatusBadRequest, "job_id: \"team-a.j\" is not namespace.name.generation"},
		{"POST", "/v2alpha1/team-a.j.0/replicas", `{"replicas": 1}`, http.StatusBadRequest, "job_id: generation \"0\""},
		{"GET", "/v2alpha1/team-b.j.1/replicas", ``, http.StatusNotFound, "namespace team-b is not served here"},
		{"POST", "/v2alpha1/team-b.j.1/replicas", `{"replicas": 1}`, http.StatusNotFound, "namespace team-b is not served here"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := requireRefused(t, h, tc)
			if tc.status == http.StatusMethodNotAllowed {
				require.NotEmpty(t, rec.Header().Get("Allow"))
			}
		})
	}
	require.Equal(t, 3.0, counted(t, metrics.Requests.WithLabelValues(routeWrongMethod, "405")))
	require.Equal(t, 1.0, counted(t, metrics.Requests.WithLabelValues(routeAddReplicas, "400")))
}

// callerAddress is where the requests of these tests come from: httptest's
// remote address, which the job's pod holds.
const callerAddress = "192.0.2.1"

// jobWithCaller is a cache holding a preemptible job and a fixed one, each
// with a running pod, the preemptible job's at callerAddress.
func jobWithCaller() client.Reader {
	set := workerSet("elastic", 1, 2, handoff.ElasticWorkers, "1:4", handoff.ScaledFrom, "2")
	fixed := taskJob("fixed", "worker", 1, 0, 1)
	pod, other := podOf(set, "StatefulSet", 0, callerAddress), podOf(fixed, "Job", 0, "192.0.2.2")
	return reading(set, fixed, &pod, &other)
}

// Requests from the job's pod that the body or the job's shape refuses are
// refused from the cache, before the API server is asked anything.
func TestRequestsRefusedBeforeAskingTheAPIServer(t *testing.T) {
	u := untouchable{t: t}
	metrics := NewMetrics(prometheus.NewRegistry())
	h, err := New(Config{Cache: jobWithCaller(), Live: u, Writer: u, Log: logr.Discard(), Metrics: metrics})
	require.NoError(t, err)
	big := `{"data": {"x": "` + strings.Repeat("x", MaxProfilingsBody) + `"}}`
	for _, tc := range []refusedRequest{
		{"POST", "/v2alpha1/ns.elastic.1/replicas", ``, http.StatusBadRequest, "body: missing"},
		{"POST", "/v2alpha1/ns.elastic.1/replicas", `{"replicas": 0}`, http.StatusBadRequest, "replicas: must be at least 1"},
		{"DELETE", "/v2alpha1/ns.elastic.1/replicas", `{"replicas": "2"}`, http.StatusBadRequest, "replicas: want an integer"},
		{"DELETE", "/v2alpha1/ns.elastic.1/replicas", `{"count": 2}`, http.StatusBadRequest, `unknown field "count"`},
		{"POST", "/v2alpha1/ns.elastic.1/replicas", `{"replicas": 1}` + strings.Repeat(" ", MaxReplicasBody), http.StatusRequestEntityTooLarge, "larger than 4096 bytes"},
		{"POST", "/v2alpha1/ns.elastic.1/profilings", `{"data": []}`, http.StatusBadRequest, "data: must be a JSON object"},
		{"POST", "/v2alpha1/ns.elastic.1/profilings", big, http.StatusRequestEntityTooLarge, "larger than 65536 bytes"},
		{"POST", "/v2alpha1/ns.elastic.2/replicas", `{"replicas": 1}`, http.StatusNotFound, "at generation 1, not 2"},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.body[:min(len(tc.body), 20)], func(t *testing.T) {
			rec := requireRefused(t, h, tc)
			if tc.status == http.StatusRequestEntityTooLarge {
				require.Equal(t, "close", rec.Header().Get("Connection"))
			}
		})
	}
	require.Equal(t, 2.0, counted(t, metrics.Requests.WithLabelValues(routeAddReplicas, "400")))
	require.Equal(t, 1.0, counted(t, metrics.Requests.WithLabelValues(routePostProfilings, "413")))
}

// Only the job's own pods may call about it: not an address that is no
// pod's, nor another job's pod, nor a bearer token when tokens are not
// reviewed. The refusedRequest says nothing of the job, and closes the
// connection.
func TestCallersOtherThanTheJobsPodsAreRefused(t *testing.T) {
	u := untouchable{t: t}
	h, err := New(Config{Cache: jobWithCaller(), Live: u, Writer: u, Log: logr.Discard()})
	require.NoError(t, err)
	for _, tc := range []struct {
		remote, path, token string
	}{
		{remote: "198.51.100.7:4000", path: "/v2alpha1/ns.elastic.1/replicas"},
		// The fixed job's pod, about the other job.
		{remote: "192.0.2.2:4000", path: "/v2alpha1/ns.elastic.1/replicas"},
		{remote: "198.51.100.7:4000", path: "/v2alpha1/ns.elastic.1/replicas", token: "Bearer abc"},
		// A job that does not exist answers as one that does.
		{remote: "198.51.100.7:4000", path: "/v2alpha1/ns.nonesuch.1/replicas"},
		{remote: "@", path: "/v2alpha1/ns.elastic.1/replicas"},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		req.RemoteAddr = tc.remote
		if tc.token != "" {
			req.Header.Set("Authorization", tc.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusForbidden, rec.Code, "%+v: %s", tc, rec.Body)
		require.Equal(t, "close", rec.Header().Get("Connection"))
		require.Contains(t, rec.Body.String(), "the request is from none of the job's pods, which alone may call about it")
		if tc.token != "" {
			require.Contains(t, rec.Body.String(), "--di-server-token-review is off")
		}
	}
	// The job's pod, from its IPv4 address as an IPv6 socket reports it.
	rec, got := serveFrom(t, h, "[::ffff:"+callerAddress+"]:4000", "GET", "/v2alpha1/ns.elastic.1/replicas", "")
	require.Equal(t, http.StatusOK, rec.Code, got.Message)
	require.Equal(t, []any{callerAddress + ":22270", ""}, got.Data)
}

func counted(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}

func TestNewRequiresItsClients(t *testing.T) {
	_, err := New(Config{Cache: untouchable{t: t}, Live: untouchable{t: t}, Writer: untouchable{t: t}, Policy: Policy{WriteRate: -1}})
	require.ErrorContains(t, err, "the write rate must be a positive number, not -1")
	u := untouchable{t: t}
	for name, cfg := range map[string]Config{
		"Cache":  {Live: u, Writer: u},
		"Live":   {Cache: u, Writer: u},
		"Writer": {Cache: u, Live: u},
	} {
		_, err := New(cfg)
		require.ErrorContains(t, err, "Config."+name+" is required")
	}
}

func TestRespondShapesTheEnvelope(t *testing.T) {
	rec := httptest.NewRecorder()
	respond(rec, http.StatusOK, "2 of 2 replicas have an address", []string{"10.0.0.1:22270", "10.0.0.2:22270"})
	require.Equal(t, http.StatusOK, rec.Code)
	require.JSONEq(t, `{"success": true, "code": 0, "message": "2 of 2 replicas have an address",
		"data": ["10.0.0.1:22270", "10.0.0.2:22270"]}`, rec.Body.String())

	rec = httptest.NewRecorder()
	respond(rec, http.StatusOK, "stored", nil)
	require.JSONEq(t, `{"success": true, "code": 0, "message": "stored", "data": null}`, rec.Body.String())

	rec = httptest.NewRecorder()
	respond(rec, http.StatusServiceUnavailable, "the API server failed; retry", nil)
	require.Equal(t, "1", rec.Header().Get("Retry-After"))

	rec = httptest.NewRecorder()
	respond(rec, http.StatusConflict, "job ns/j is not preemptible", []string{"ignored"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.JSONEq(t, `{"success": false, "code": 1, "message": "job ns/j is not preemptible", "data": null}`, rec.Body.String())
}

func TestFromAPIServer(t *testing.T) {
	statefulSets := schema.GroupResource{Group: "apps", Resource: "statefulsets"}
	for _, tc := range []struct {
		err    error
		status int
	}{
		{apierrors.NewNotFound(statefulSets, "j-worker"), http.StatusNotFound},
		{apierrors.NewForbidden(statefulSets, "j-worker", errors.New("no RBAC")), http.StatusInternalServerError},
		{apierrors.NewConflict(statefulSets, "j-worker", errors.New("changed")), http.StatusServiceUnavailable},
		{apierrors.NewServiceUnavailable("down"), http.StatusServiceUnavailable},
		{apierrors.NewTooManyRequests("slow down", 1), http.StatusServiceUnavailable},
		{context.DeadlineExceeded, http.StatusServiceUnavailable},
		{errors.New("connection refused"), http.StatusServiceUnavailable},
		{fail(http.StatusConflict, "not preemptible"), http.StatusConflict},
	} {
		got := fromAPIServer(tc.err, "scaling")
		require.Equal(t, tc.status, got.status, tc.err.Error())
	}
}
