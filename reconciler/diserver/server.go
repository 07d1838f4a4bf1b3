package diserver

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// FieldManager is the name the DI server's writes are recorded under: the
// reconciler's, whose process serves the API.
const FieldManager = handoff.FieldManager

// Config is what the DI server reads and writes through.
type Config struct {
	// Cache answers reads that may lag a moment behind the cluster: the
	// replicas' addresses, which callers poll. The manager's client,
	// reading its label-filtered cache, fits.
	Cache client.Reader
	// Live answers the reads a write is computed from, so that no write
	// rests on a stale copy: the manager's API reader.
	Live client.Reader
	// Writer scales StatefulSets and annotates workloads.
	Writer client.Client
	// Namespaces, when any, are the only ones served: the reconciler's
	// cache holds nothing of the others, so their jobs are unknown (404).
	Namespaces []string
	Log        logr.Logger
	// Metrics, when set, count requests and workers changed.
	Metrics *Metrics
	// Timeout bounds the work of one request; 30 seconds when zero.
	Timeout time.Duration
}

// The routes, as named in logs and metrics.
const (
	routeListReplicas   = "list_replicas"
	routeAddReplicas    = "add_replicas"
	routeRemoveReplicas = "remove_replicas"
	routePostProfilings = "post_profilings"
	// Requests of a known path with a method it does not take.
	routeWrongMethod = "wrong_method"
	// Requests of any other path.
	routeUnknown = "unknown"
)

// server answers the DI server API.
type server struct {
	cache, live client.Reader
	writer      client.Client
	namespaces  []string
	log         logr.Logger
	metrics     *Metrics
	timeout     time.Duration
}

// New returns the DI server API's handler, to be served as is: it answers
// every path, those it does not know with 404 in the API's envelope.
func New(cfg Config) (http.Handler, error) {
	switch {
	case cfg.Cache == nil:
		return nil, errors.New("diserver: Config.Cache is required")
	case cfg.Live == nil:
		return nil, errors.New("diserver: Config.Live is required")
	case cfg.Writer == nil:
		return nil, errors.New("diserver: Config.Writer is required")
	}
	s := &server{
		cache: cfg.Cache, live: cfg.Live, writer: cfg.Writer,
		namespaces: slices.Clone(cfg.Namespaces),
		log:        cfg.Log, metrics: cfg.Metrics, timeout: cfg.Timeout,
	}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v2alpha1/{job}/replicas", s.endpoint(routeListReplicas, s.listReplicas))
	mux.Handle("POST /v2alpha1/{job}/replicas", s.endpoint(routeAddReplicas, s.addReplicas))
	mux.Handle("DELETE /v2alpha1/{job}/replicas", s.endpoint(routeRemoveReplicas, s.removeReplicas))
	mux.Handle("POST /v2alpha1/{job}/profilings", s.endpoint(routePostProfilings, s.postProfilings))
	// Patterns without a method catch the methods the ones above leave
	// out, so that a wrong method gets the envelope too, not the mux's
	// plain-text 405.
	mux.Handle("/v2alpha1/{job}/replicas", s.methodNotAllowed("GET, HEAD, POST, DELETE"))
	mux.Handle("/v2alpha1/{job}/profilings", s.methodNotAllowed("POST"))
	mux.Handle("/", s.notFound())
	return mux, nil
}

// answer is what a request succeeded with.
type answer struct {
	message string
	data    any
}

// handler serves one route for the job the path names; a returned
// *requestError is answered with its status, any other error with 500.
type handler func(ctx context.Context, id JobID, r *http.Request) (answer, error)

// endpoint does what every route does: read the job_id, keep to the
// namespaces served, bound the work, answer in the envelope, log and count.
func (s *server) endpoint(route string, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := s.log.WithValues("route", route, "jobID", r.PathValue("job"))
		id, err := ParseJobID(r.PathValue("job"))
		var a answer
		switch {
		case err != nil:
			err = fail(http.StatusBadRequest, "%v", err)
		case !s.serves(id.Namespace):
			err = fail(http.StatusNotFound, "job %s: namespace %s is not served here", id.job(), id.Namespace)
		default:
			ctx, cancel := context.WithTimeout(logr.NewContext(r.Context(), log), s.timeout)
			a, err = h(ctx, id, r)
			cancel()
		}
		if err == nil {
			s.metrics.answered(route, http.StatusOK)
			respond(w, http.StatusOK, a.message, a.data)
			return
		}
		var refused *requestError
		if !errors.As(err, &refused) {
			refused = fail(http.StatusInternalServerError, "%v", err)
		}
		if refused.status >= 500 {
			log.Error(err, "request failed", "status", refused.status)
		} else {
			log.V(1).Info("request refused", "status", refused.status, "reason", refused.message)
		}
		s.metrics.answered(route, refused.status)
		respond(w, refused.status, refused.message, nil)
	})
}

func (s *server) serves(namespace string) bool {
	return len(s.namespaces) == 0 || slices.Contains(s.namespaces, namespace)
}

func (s *server) methodNotAllowed(allowed string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		s.metrics.answered(routeWrongMethod, http.StatusMethodNotAllowed)
		respond(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": method not allowed; use "+allowed, nil)
	})
}

func (s *server) notFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.metrics.answered(routeUnknown, http.StatusNotFound)
		respond(w, http.StatusNotFound, r.URL.Path+": no such path; the API is /v2alpha1/{job_id}/replicas and /v2alpha1/{job_id}/profilings", nil)
	})
}
