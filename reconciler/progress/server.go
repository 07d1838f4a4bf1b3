package progress

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/internal/expiring"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
)

// Config is the progress server's clients and settings.
type Config struct {
	// Cache answers every read, so that a report costs the API server no
	// read: the caller's pod, and the job's workloads.
	Cache client.Reader
	// Writer creates TokenReviews and patches the job's first workload.
	Writer client.Client
	// Namespaces, when any, are the only ones served (404 for another):
	// the cache watches no other, so no other's caller could be checked.
	Namespaces []string
	Log        logr.Logger
	Metrics    *Metrics
	// Writes counts the writes with the reconciler's others, so that its
	// load on the API server is one metric.
	Writes *prometheus.CounterVec
	// WriteInterval bounds each job's writes; zero is the package's
	// WriteInterval, and tests set their own.
	WriteInterval time.Duration
	// Now is the clock of the per-job and per-address buckets, the review
	// cache and the check of a report's lastUpdatedTime; time.Now when nil.
	Now func() time.Time
}

// Handler serves the progress API.
type Handler struct {
	http.Handler
	recorder *recorder
}

type server struct {
	namespaces []string
	log        logr.Logger
	metrics    *Metrics
	reviewer   *reviewer
	jobs       *keyedBuckets[observed.Key]
	recorder   *recorder
	now        func() time.Time
}

// New returns the progress API's handler: POST of a report to a job's
// status path (Pattern), and 404 for anything else. It writes nothing
// until Start.
func New(cfg Config) (*Handler, error) {
	switch {
	case cfg.Cache == nil:
		return nil, errors.New("progress: Config.Cache is required")
	case cfg.Writer == nil:
		return nil, errors.New("progress: Config.Writer is required")
	case cfg.Metrics == nil:
		return nil, errors.New("progress: Config.Metrics is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.WriteInterval == 0 {
		cfg.WriteInterval = WriteInterval
	}
	writes := cfg.Writes
	if writes == nil {
		writes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trainfn_writes_total"}, []string{"kind"})
	}
	s := &server{
		namespaces: slices.Clone(cfg.Namespaces),
		log:        cfg.Log,
		metrics:    cfg.Metrics,
		reviewer: &reviewer{
			client: cfg.Writer, cache: cfg.Cache,
			bucket:    newBucket(ReviewRate, ReviewBurst, "reviews of new bearer tokens"),
			addresses: newAddressBuckets(AddressReviewRate, AddressReviewBurst, cfg.Now),
			now:       cfg.Now,
			reviews:   expiring.New[[32]byte, reviewedPod](ReviewCacheTTL, maxCachedReviews, cfg.Now),
		},
		jobs:     newJobBuckets(JobRate, JobBurst, cfg.Now),
		recorder: newRecorder(cfg.Cache, write.Writer{Client: cfg.Writer, Writes: writes}, cfg.WriteInterval, cfg.Log, cfg.Now),
		now:      cfg.Now,
	}
	mux := http.NewServeMux()
	mux.HandleFunc(Pattern, s.report)
	mux.HandleFunc("/", s.notFound)
	return &Handler{Handler: mux, recorder: s.recorder}, nil
}

// Start lets the handler record reports, until ctx ends.
func (h *Handler) Start(ctx context.Context) { h.recorder.start(ctx) }

// report serves POST .../status: who calls, how often, what it says, then
// the record.
func (s *server) report(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
	defer cancel()
	key, ok := jobOf(r.PathValue("group"), r.PathValue("version"), r.PathValue("plural"), r.PathValue("namespace"), r.PathValue("name"))
	if !ok || len(s.namespaces) > 0 && !slices.Contains(s.namespaces, key.Namespace) {
		s.notFound(w, r)
		return
	}
	log := s.log.WithValues("namespace", key.Namespace, "kind", key.Kind, "job", key.Name, "remote", r.RemoteAddr)
	req, refused := s.accept(ctx, w, r, key)
	if refused != nil {
		if refused.status.Code >= 500 {
			log.Error(refused, "report failed", "code", refused.status.Code)
		} else {
			log.V(1).Info("report refused", "code", refused.status.Code, "reason", refused.status.Message)
		}
		s.metrics.answered(int(refused.status.Code))
		refused.write(w)
		return
	}
	if req.TrainerStatus != nil {
		s.metrics.record(key, req.TrainerStatus)
		s.recorder.record(key, req.TrainerStatus)
	}
	s.metrics.answered(http.StatusOK)
	writeJSON(w, http.StatusOK, req)
}

// accept reads a request the caller may make, or refuses it.
func (s *server) accept(ctx context.Context, w http.ResponseWriter, r *http.Request, key observed.Key) (*Request, *refusal) {
	if _, refused := s.reviewer.authenticate(ctx, r, key); refused != nil {
		return nil, refused
	}
	if refused := s.jobs.take(key); refused != nil {
		return nil, refused
	}
	if r.ContentLength > MaxBody {
		return nil, refuse(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, fmt.Sprintf("body: larger than %d bytes", MaxBody))
	}
	req, refused := decode(http.MaxBytesReader(w, r.Body, MaxBody))
	if refused != nil {
		return nil, refused
	}
	if req.TrainerStatus != nil {
		if errs := append(validate(req.TrainerStatus), checkClock(req.TrainerStatus, s.now())...); len(errs) > 0 {
			return nil, invalid(errs)
		}
	}
	return req, nil
}

func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	s.metrics.answered(http.StatusNotFound)
	refuse(http.StatusNotFound, metav1.StatusReasonNotFound,
		r.Method+" "+r.URL.Path+": no such route; POST /apis/{group}/{version}/namespaces/{namespace}/{plural}/{name}/status, for trainfn's job kinds").write(w)
}
