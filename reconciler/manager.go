package reconciler

import (
	"context"
	"fmt"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/trainfn/trainfn/reconciler/allocator"
	"github.com/trainfn/trainfn/reconciler/diserver"
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
// cache holds only objects trainfn rendered (by their operator label) and
// never Secrets, so its memory follows the number of training pods, not of
// all pods in the cluster.
func NewManager(config *rest.Config, opts Options) (ctrl.Manager, error) {
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
	for _, ns := range opts.Namespaces {
		namespaces[ns] = cache.Config{}
	}
	if len(namespaces) == 0 {
		namespaces = nil
	}
	shutdown := opts.ShutdownTimeout
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Cache: cache.Options{
			ByObject:          byObject,
			DefaultNamespaces: namespaces,
			DefaultTransform:  cache.TransformStripManagedFields(),
		},
		Client:                        client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
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
	r := &Reconciler{
		Client:   mgr.GetClient(),
		Secrets:  mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder(FieldManager),
		Metrics:  NewMetrics(metrics.Registry),
		Now:      time.Now,
	}
	if opts.DIServerAddress != "0" && opts.DIServerAddress != "" {
		api, err := diserver.New(diserver.Config{
			Cache: mgr.GetClient(), Live: mgr.GetAPIReader(), Writer: mgr.GetClient(),
			Namespaces: opts.Namespaces, Log: mgr.GetLogger().WithName("di-server"),
			Metrics: diserver.NewMetrics(metrics.Registry), Policy: opts.DIServer,
		})
		if err != nil {
			return nil, err
		}
		// Every replica answers: the API's writes are conditional on what
		// they read, so replicas cannot undo each other's.
		if err := mgr.Add(&manager.Server{
			Name:            "di-server",
			Server:          diserver.NewHTTPServer(opts.DIServerAddress, api),
			ShutdownTimeout: &shutdown,
		}); err != nil {
			return nil, err
		}
	}
	if opts.SchedulingPeriod > 0 {
		r.Allocation = &Allocation{
			Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Policy: allocator.MarginalThroughput{},
			Period: opts.SchedulingPeriod, Recorder: r.Recorder, Metrics: r.Metrics, Now: time.Now,
		}
		// A Runnable without NeedLeaderElection runs on the leader only.
		if err := mgr.Add(r.Allocation); err != nil {
			return nil, err
		}
	}
	workers := opts.Workers
	if workers < 1 {
		workers = 1
	}
	// A StatefulSet's status follows its pods' readiness, so its events
	// come in the same bursts.
	immediately, gathered := jobOf(0), jobOf(opts.Coalesce)
	return mgr, ctrl.NewControllerManagedBy(mgr).
		Named("trainfn").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Watches(&corev1.Pod{}, gathered).
		Watches(&appsv1.StatefulSet{}, gathered).
		Watches(&corev1.ConfigMap{}, immediately).
		Watches(&batchv1.Job{}, immediately).
		Complete(r)
}

// jobOf queues the job an object belongs to, after delay: the work queue
// holds a queued job once, so the events of a burst within the delay (a
// StatefulSet's pods becoming ready together, say) make one reconcile.
func jobOf(delay time.Duration) handler.EventHandler {
	add := func(obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		name, ok := obj.GetLabels()[handoff.JobNameLabel]
		if !ok {
			return
		}
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}
		if delay > 0 {
			q.AddAfter(req, delay)
		} else {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
	}
}
