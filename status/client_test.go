package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/phase"
)

// apiServer answers lists as the API server does, from the objects of a
// job made of a launcher Job, a worker StatefulSet and their pods, and
// records the requests.
type apiServer struct {
	mu       sync.Mutex
	requests []string
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	s.mu.Unlock()
	launcher := job("research", "pi", "pi-launcher", handoff.RoleLauncher, 1, 0)
	workers := statefulSet("research", "pi", "pi-worker", handoff.RoleWorker, 2, 0)
	ofKind("MPIJob", launcher, workers)
	var list any
	switch r.URL.Path {
	case "/apis/batch/v1/namespaces/research/jobs", "/apis/batch/v1/jobs":
		w.Header().Add("Warning", `299 - "batch/v1 Job is going away"`)
		list = &batchv1.JobList{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "JobList"}, Items: []batchv1.Job{*launcher}}
	case "/apis/apps/v1/namespaces/research/statefulsets", "/apis/apps/v1/statefulsets":
		list = &appsv1.StatefulSetList{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSetList"}, Items: []appsv1.StatefulSet{*workers}}
	case "/api/v1/namespaces/research/pods", "/api/v1/pods":
		list = &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []corev1.Pod{
			*pod(launcher, "Job", 0, true), *pod(workers, "StatefulSet", 0, true), *pod(workers, "StatefulSet", 1, true)}}
	case "/apis/batch/v1/namespaces/forbidden/jobs":
		status := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "", nil).Status()
		status.APIVersion, status.Kind = "v1", "Status"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(status)
		return
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// TestClient lists through the REST client, as `trainfn status` does: the
// paths and label selector of each API group, and the API server's
// warnings and refusals passed on.
func TestClient(t *testing.T) {
	api := &apiServer{}
	server := httptest.NewServer(api)
	defer server.Close()
	var warnings bytes.Buffer
	c, err := status.NewClient(&rest.Config{Host: server.URL}, &warnings)
	require.NoError(t, err)

	got, err := status.Get(context.Background(), c, "research", "pi")
	require.NoError(t, err)
	assert.Equal(t, row{"research", "pi", "MPIJob", phase.Running, 3, 3}, rows([]status.Job{got})[0])
	selector := "labelSelector=training.kubeflow.org%2Fjob-name%3Dpi%2Ctraining.kubeflow.org%2Foperator-name%3Dtrainfn"
	assert.Equal(t, []string{
		"GET /apis/batch/v1/namespaces/research/jobs?" + selector,
		"GET /apis/apps/v1/namespaces/research/statefulsets?" + selector,
		"GET /api/v1/namespaces/research/pods?" + selector,
	}, api.requests)
	assert.Equal(t, "Warning: batch/v1 Job is going away\n", warnings.String(), "the API server's warnings, once each")

	all, err := status.List(context.Background(), c, "")
	require.NoError(t, err)
	assert.Len(t, all, 1)
	assert.Equal(t, "GET /apis/batch/v1/jobs?labelSelector=training.kubeflow.org%2Foperator-name%3Dtrainfn", api.requests[3], "all namespaces at once")
	assert.Equal(t, "Warning: batch/v1 Job is going away\n", warnings.String(), "the API server's warnings, once each")

	_, err = status.List(context.Background(), c, "forbidden")
	assert.ErrorContains(t, err, `listing Jobs in namespace "forbidden": jobs.batch is forbidden`)
}
