package reconciler

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/trainfn/trainfn/reconciler/allocation"
	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/cleanup"
	"github.com/trainfn/trainfn/reconciler/discovery"
	"github.com/trainfn/trainfn/reconciler/diserver"
	"github.com/trainfn/trainfn/reconciler/gates"
	"github.com/trainfn/trainfn/reconciler/jobphase"
	"github.com/trainfn/trainfn/reconciler/metrics"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/scaling"
	"github.com/trainfn/trainfn/reconciler/sshsecret"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

// Options configure a running reconciler.
type Options struct {
	// Namespaces are those watched; all when empty.
	Namespaces []string
	// LeaderElection lets one of several replicas write at a time.
	LeaderElection          bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	// MetricsAddress serves /metrics, ProbeAddress /healthz and /readyz;
	// "0" turns either off.
	MetricsAddress, ProbeAddress string
	// Coalesce gathers bursts of pod events into one reconcile of a job.
	Coalesce time.Duration
	// Workers reconcile different jobs concurrently.
	Workers int
	// ShutdownTimeout bounds the wait for running reconciles on exit.
	ShutdownTimeout time.Duration
	// SchedulingPeriod is how often the allocator rebalances preemptible
	// DIJobs; 0 runs no allocator, and the scheduler alone places their
	// workers.
	SchedulingPeriod time.Duration
	// DIServerAddress serves the DI server API; "0" turns it off.
	DIServerAddress string
	// DIServer is who may call the DI server API and how often.
	DIServer diserver.Policy
	// Progress serves progress reports.
	Progress ProgressOptions
}

// Run runs the reconciler until ctx ends.
func Run(ctx context.Context, config *rest.Config, opts Options) error {
	mgr, err := NewManager(config, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// NewManager sets up the reconciler on a controller-runtime manager: the
// cache holds only objects trainfn rendered (by their operator label), and
// no Secret, which the reconciler never reads, so its memory follows the
// number of training pods, not of all pods in the cluster.
func NewManager(config *rest.Config, opts Options) (ctrl.Manager, error) {
	shutdown := opts.ShutdownTimeout
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Cache:                         cacheOptions(opts.Namespaces),
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddress},
		HealthProbeBindAddress:        opts.ProbeAddress,
		GracefulShutdownTimeout:       &shutdown,
	})
	if err != nil {
		return nil, fmt.Errorf("setting up the reconciler: %w", err)
	}
	if opts.ProbeAddress != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return nil, err
		}
		// Ready once the cache has synced: before, the reconciler knows no job.
		if err := mgr.AddReadyzCheck("cache", func(req *http.Request) error {
			if !mgr.GetCache().WaitForCacheSync(req.Context()) {
				return fmt.Errorf("cache not synced")
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	m := metrics.New(crmetrics.Registry)
	writer := write.Writer{Client: mgr.GetClient(), Writes: m.Writes}
	events := mgr.GetEventRecorder(write.FieldManager)
	var alloc *allocation.Allocation
	if opts.SchedulingPeriod > 0 {
		alloc = newAllocation(mgr, opts, writer, events, m)
		// A Runnable without NeedLeaderElection runs on the leader only.
		if err := mgr.Add(alloc); err != nil {
			return nil, err
		}
	}
	if err := addDIServer(mgr, opts, m.Writes); err != nil {
		return nil, err
	}
	r := newReconciler(mgr, writer, events, m, alloc)
	if r.ProgressCA, err = addProgress(mgr, opts, m.Writes); err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers < 1 {
		workers = 1
	}
	// A StatefulSet's status follows its pods' readiness, so its events
	// come in the same bursts.
	immediately, gathered := jobOf(mgr.GetCache(), 0), jobOf(mgr.GetCache(), opts.Coalesce)
	return mgr, builder.TypedControllerManagedBy[observed.Key](mgr).
		Named("trainfn").
		WithOptions(controller.TypedOptions[observed.Key]{MaxConcurrentReconciles: workers}).
		WithLogConstructor(func(key *observed.Key) logr.Logger {
			l := mgr.GetLogger().WithValues("controller", "trainfn")
			if key != nil {
				l = l.WithValues("namespace", key.Namespace, "kind", key.Kind, "job", key.Name)
			}
			return l
		}).
		Watches(&corev1.Pod{}, gathered).
		Watches(&appsv1.StatefulSet{}, gathered).
		Watches(&corev1.ConfigMap{}, immediately).
		Watches(&batchv1.Job{}, immediately).
		Complete(r)
}

// cacheOptions keep in the cache only objects trainfn rendered, of the
// watched namespaces (all when none), and Nodes.
func cacheOptions(watched []string) cache.Options {
	rendered := labels.SelectorFromSet(labels.Set{handoff.OperatorNameLabel: handoff.Operator})
	byObject := map[client.Object]cache.ByObject{}
	for _, obj := range []client.Object{&corev1.Pod{}, &corev1.ConfigMap{}, &batchv1.Job{}, &appsv1.StatefulSet{}} {
		byObject[obj] = cache.ByObject{Label: rendered}
	}
	// Nodes are read by the allocator: their room, readiness, labels and
	// taints; not the images they hold, the bulk of a node's status.
	byObject[&corev1.Node{}] = cache.ByObject{Transform: func(obj any) (any, error) {
		if n, ok := obj.(*corev1.Node); ok {
			n.Status.Images = nil
			n.ManagedFields = nil
		}
		return obj, nil
	}}
	namespaces := map[string]cache.Config{}
	for _, ns := range watched {
		namespaces[ns] = cache.Config{}
	}
	if len(namespaces) == 0 {
		namespaces = nil
	}
	return cache.Options{
		ByObject:          byObject,
		DefaultNamespaces: namespaces,
		DefaultTransform:  cache.TransformStripManagedFields(),
	}
}

// newReconciler puts the concerns a job's reconcile runs together; with
// an allocator, it places preemptible DIJobs' first workers and those at
// their allocation gate.
func newReconciler(mgr ctrl.Manager, writer write.Writer, events recorder.EventRecorder, m *metrics.Metrics, a *allocation.Allocation) *Reconciler {
	scaler := &scaling.Scaler{Writer: writer, Recorder: events, Scales: m.Scales}
	pinner := &gates.Pinner{Writer: writer, Live: mgr.GetAPIReader(), Now: time.Now}
	if a != nil {
		// Set only when an allocator runs: a nil *Allocation in the
		// interface would not be nil.
		scaler.Placer, pinner.Allocator = a, a
	}
	return &Reconciler{
		Cache:      mgr.GetClient(),
		Writer:     writer,
		Reconciles: m.Reconciles,
		SSH:        &sshsecret.Ensurer{Writer: writer, Recorder: events, Created: m.SSHSecrets},
		Scaling:    scaler,
		Discovery:  &discovery.Updater{Writer: writer, Writes: m.DiscoveryWrites, Latency: m.DiscoveryLatency, Now: time.Now},
		Cleanup:    &cleanup.Cleaner{Writer: writer, Recorder: events, CleanUps: m.CleanUps, Now: time.Now},
		Pinner:     pinner,
		Phase:      newPhase(mgr, writer, events),
	}
}

// newPhase records jobs' phases, and reports how many are in each, on
// the leader, from the cache.
func newPhase(mgr ctrl.Manager, writer write.Writer, events recorder.EventRecorder) *jobphase.Recorder {
	crmetrics.Registry.MustRegister(jobphase.NewCollector(mgr.GetCache(), mgr.Elected()))
	return &jobphase.Recorder{Writer: writer, Recorder: events, Metrics: jobphase.NewMetrics(crmetrics.Registry), Now: time.Now}
}

// newAllocation is the allocator of preemptible DIJobs, over the
// namespaces the reconciler watches.
func newAllocation(mgr ctrl.Manager, opts Options, writer write.Writer, events recorder.EventRecorder, m *metrics.Metrics) *allocation.Allocation {
	return &allocation.Allocation{
		Client: mgr.GetClient(), Writer: writer, Live: mgr.GetAPIReader(), Namespaces: opts.Namespaces,
		Policy: allocator.MarginalThroughput{}, Period: opts.SchedulingPeriod,
		Recorder: events, Scales: m.Scales, Now: time.Now,
	}
}

// addDIServer serves the DI server API, on every replica: the API's
// writes are conditional on what they read, so replicas cannot undo each
// other's.
func addDIServer(mgr ctrl.Manager, opts Options, writes *prometheus.CounterVec) error {
	if opts.DIServerAddress == "0" || opts.DIServerAddress == "" {
		return nil
	}
	api, err := diserver.New(diserver.Config{
		Cache: mgr.GetClient(), Live: mgr.GetAPIReader(), Writer: mgr.GetClient(),
		Namespaces: opts.Namespaces, Log: mgr.GetLogger().WithName("di-server"),
		Metrics: diserver.NewMetrics(crmetrics.Registry), Writes: writes, Policy: opts.DIServer,
	})
	if err != nil {
		return err
	}
	shutdown := opts.ShutdownTimeout
	return mgr.Add(&manager.Server{
		Name:            "di-server",
		Server:          diserver.NewHTTPServer(opts.DIServerAddress, api),
		ShutdownTimeout: &shutdown,
	})
}

// jobOf queues the job an object belongs to, after delay: the work queue
// holds a queued job once, so the events of a burst within the delay (a
// StatefulSet's pods becoming ready together, say) make one reconcile.
// Workloads and pods name their job's kind; a ConfigMap does not, and
// queues each job of its name that has a workload in the cache, r.
func jobOf(r client.Reader, delay time.Duration) handler.TypedEventHandler[client.Object, observed.Key] {
	type queue = workqueue.TypedRateLimitingInterface[observed.Key]
	add := func(ctx context.Context, obj client.Object, q queue) {
		keys, err := observed.KeysOf(ctx, r, obj)
		if err != nil {
			log.FromContext(ctx).Error(err, "finding the jobs of an object", "object", client.ObjectKeyFromObject(obj))
		}
		for _, key := range keys {
			if delay > 0 {
				q.AddAfter(key, delay)
			} else {
				q.Add(key)
			}
		}
	}
	return handler.TypedFuncs[client.Object, observed.Key]{
		CreateFunc:  func(ctx context.Context, e event.CreateEvent, q queue) { add(ctx, e.Object, q) },
		UpdateFunc:  func(ctx context.Context, e event.UpdateEvent, q queue) { add(ctx, e.ObjectNew, q) },
		DeleteFunc:  func(ctx context.Context, e event.DeleteEvent, q queue) { add(ctx, e.Object, q) },
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q queue) { add(ctx, e.Object, q) },
	}
}
