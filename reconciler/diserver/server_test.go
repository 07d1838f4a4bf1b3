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
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var got Response
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), rec.Body.String())
	return rec, got
}

func TestRequestsRefusedBeforeReadingTheCluster(t *testing.T) {
	u := untouchable{t: t}
	metrics := NewMetrics(prometheus.NewRegistry())
	h, err := New(Config{Cache: u, Live: u, Writer: u, Namespaces: []string{"team-a"}, Log: logr.Discard(), Metrics: metrics})
	require.NoError(t, err)
	big := `{"data": {"x": "` + strings.Repeat("x", MaxProfilingsBody) + `"}}`
	for _, tc := range []struct {
		method, path, body string
		status             int
		mentions           string
	}{
		{"PUT", "/v2alpha1/team-a.j.1/replicas", `{"replicas": 1}`, http.StatusMethodNotAllowed, "PUT /v2alpha1/team-a.j.1/replicas: method not allowed"},
		{"PATCH", "/v2alpha1/team-a.j.1/replicas", `{"replicas": 1}`, http.StatusMethodNotAllowed, "use GET, HEAD, POST, DELETE"},
		{"GET", "/v2alpha1/team-a.j.1/profilings", ``, http.StatusMethodNotAllowed, "use POST"},
		{"GET", "/v2alpha1/team-a.j.1/other", ``, http.StatusNotFound, "no such path"},
		{"GET", "/", ``, http.StatusNotFound, "no such path"},
		{"GET", "/v2alpha1/team-a.j/replicas", ``, http.StatusBadRequest, "job_id: \"team-a.j\" is not namespace.name.generation"},
		{"POST", "/v2alpha1/team-a.j.0/replicas", `{"replicas": 1}`, http.StatusBadRequest, "job_id: generation \"0\""},
		{"GET", "/v2alpha1/team-b.j.1/replicas", ``, http.StatusNotFound, "namespace team-b is not served here"},
		{"POST", "/v2alpha1/team-b.j.1/replicas", `{"replicas": 1}`, http.StatusNotFound, "namespace team-b is not served here"},
		{"POST", "/v2alpha1/team-a.j.1/replicas", ``, http.StatusBadRequest, "body: missing"},
		{"POST", "/v2alpha1/team-a.j.1/replicas", `{"replicas": 0}`, http.StatusBadRequest, "replicas: must be at least 1"},
		{"DELETE", "/v2alpha1/team-a.j.1/replicas", `{"replicas": "2"}`, http.StatusBadRequest, "replicas: want an integer"},
		{"DELETE", "/v2alpha1/team-a.j.1/replicas", `{"count": 2}`, http.StatusBadRequest, `unknown field "count"`},
		{"POST", "/v2alpha1/team-a.j.1/profilings", `{"data": []}`, http.StatusBadRequest, "data: must be a JSON object"},
		{"POST", "/v2alpha1/team-a.j.1/profilings", big, http.StatusRequestEntityTooLarge, "larger than 65536 bytes"},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.body[:min(len(tc.body), 20)], func(t *testing.T) {
			rec, got := serve(t, h, tc.method, tc.path, tc.body)
			require.Equal(t, tc.status, rec.Code, got.Message)
			require.False(t, got.Success)
			require.Equal(t, CodeFailed, got.Code)
			require.Nil(t, got.Data)
			require.Contains(t, got.Message, tc.mentions)
			if tc.status == http.StatusMethodNotAllowed {
				require.NotEmpty(t, rec.Header().Get("Allow"))
			}
		})
	}
	require.Equal(t, 3.0, counted(t, metrics.Requests.WithLabelValues(routeWrongMethod, "405")))
	require.Equal(t, 3.0, counted(t, metrics.Requests.WithLabelValues(routeAddReplicas, "400")))
	require.Equal(t, 1.0, counted(t, metrics.Requests.WithLabelValues(routePostProfilings, "413")))
}

func counted(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}

func TestNewRequiresItsClients(t *testing.T) {
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
