package diserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

// FieldManager is the name the DI server's writes are recorded under: the
// reconciler's, whose process serves the API.
const FieldManager = handoff.FieldManager

// Config is what the DI server reads and writes through.
type Config struct {
	// Cache answers every read a request makes: the job's workloads and
	// pods, which also tell whether the caller is one of those pods. The
	// manager's client, reading its label-filtered cache, fits: a request
	// costs the API server nothing until it writes.
	Cache client.Reader
	// Live reads again, by name, the one object a write lost a race for
	// (a conflict), so that the next attempt starts from the winner's: the
	// manager's API reader. It is never asked to list.
	Live client.Reader
	// Writer patches StatefulSets and Jobs and, with Policy.TokenReview,
	// creates TokenReviews and SubjectAccessReviews.
	Writer client.Client
	// Namespaces, when any, are the only ones served: the reconciler's
	// cache holds nothing of the others, so their jobs are unknown (404).
	Namespaces []string
	Log        logr.Logger
	// Metrics, when set, count requests and workers changed.
	Metrics *Metrics
	// Writes, when set, counts the writes by kind of object, with the
	// reconciler's other writes (trainfn_writes_total).
	Writes *prometheus.CounterVec
	// Policy says who may call and how often.
	Policy Policy
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
	// written patches, counted with the reconciler's other writes.
	written    write.Writer
	namespaces []string
	log        logr.Logger
	metrics    *Metrics
	// writes bounds the requests that write to the API server.
	writes *bucket
	// reviewer, with Policy.TokenReview, serves bearer-token callers.
	reviewer *reviewer
	// turns order the writes to each object.
	turns *turns
}

// New returns the DI server API's handler, to be served as is (see
// NewHTTPServer): it answers every path, those it does not know with 404
// in the API's envelope.
func New(cfg Config) (http.Handler, error) {
	switch {
	case cfg.Cache == nil:
		return nil, errors.New("diserver: Config.Cache is required")
	case cfg.Live == nil:
		return nil, errors.New("diserver: Config.Live is required")
	case cfg.Writer == nil:
		return nil, errors.New("diserver: Config.Writer is required")
	}
	policy, err := cfg.Policy.withDefaults()
	if err != nil {
		return nil, err
	}
	writes := cfg.Writes
	if writes == nil {
		writes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trainfn_writes_total"}, []string{"kind"})
	}
	s := &server{
		cache: cfg.Cache, live: cfg.Live, written: write.Writer{Client: cfg.Writer, Writes: writes},
		namespaces: slices.Clone(cfg.Namespaces),
		log:        cfg.Log, metrics: cfg.Metrics,
		writes: newBucket(policy.WriteRate, policy.WriteBurst, "writes"),
		turns:  newTurns(),
	}
	if policy.TokenReview {
		s.reviewer = newReviewer(cfg.Writer, policy, time.Now)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v2alpha1/{job}/replicas", s.endpoint(routeListReplicas, noBody, s.listReplicas))
	mux.Handle("POST /v2alpha1/{job}/replicas", s.endpoint(routeAddReplicas, MaxReplicasBody, s.addReplicas))
	mux.Handle("DELETE /v2alpha1/{job}/replicas", s.endpoint(routeRemoveReplicas, MaxReplicasBody, s.removeReplicas))
	mux.Handle("POST /v2alpha1/{job}/profilings", s.endpoint(routePostProfilings, MaxProfilingsBody, s.postProfilings))
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

// call is a request its endpoint has read: the job it is about, who sent
// it, and its body, bounded.
type call struct {
	id     JobID
	caller caller
	body   io.Reader
}

// handler serves one route for the job the path names; a returned
// *requestError is answered with its status, any other error with 500.
type handler func(ctx context.Context, c *call) (answer, error)

// noBody is the body limit of a route that reads none.
const noBody = -1

// endpoint does what every route does: read the job_id, keep to the
// namespaces served, know the caller, bound the body and the work, answer
// in the envelope, log and count.
func (s *server) endpoint(route string, bodyLimit int64, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := s.log.WithValues("route", route, "jobID", r.PathValue("job"), "remote", r.RemoteAddr)
		ctx, cancel := context.WithTimeout(logr.NewContext(r.Context(), log), RequestTimeout)
		defer cancel()
		a, err := s.serve(ctx, w, r, bodyLimit, h)
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
		refuse(w, refused)
	})
}

// serve reads what every route needs and hands the request to h.
func (s *server) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, bodyLimit int64, h handler) (answer, error) {
	id, err := ParseJobID(r.PathValue("job"))
	if err != nil {
		return answer{}, fail(http.StatusBadRequest, "%v", err)
	}
	if !s.serves(id.Namespace) {
		return answer{}, fail(http.StatusNotFound, "job %s: namespace %s is not served here", id.job(), id.Namespace)
	}
	who, err := s.authenticate(ctx, r, id)
	if err != nil {
		return answer{}, err
	}
	c := &call{id: id, caller: who, body: http.NoBody}
	if bodyLimit != noBody {
		if r.ContentLength > bodyLimit {
			return answer{}, fail(http.StatusRequestEntityTooLarge, "body: larger than %d bytes", bodyLimit)
		}
		c.body = http.MaxBytesReader(w, r.Body, bodyLimit)
	}
	return h(logr.NewContext(ctx, logr.FromContextOrDiscard(ctx).WithValues("caller", who.String())), c)
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
