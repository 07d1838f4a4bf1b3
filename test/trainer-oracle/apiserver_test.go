package oracle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// requireToolsEnv, when set (make e2e sets it), turns missing control-plane
// binaries into a failure; a bare `go test` skips the tests that need them.
const requireToolsEnv = "TRAINFN_REQUIRE_TOOLS"

// assetsEnv names a folder of kube-apiserver and etcd binaries, as
// controller-runtime's envtest reads it; else the repository's .cache/bin,
// where hack/cluster-tools.sh builds them.
const assetsEnv = "KUBEBUILDER_ASSETS"

// trainerServer is a real kube-apiserver, with its etcd, that serves
// Trainer v2.3.0's CRDs and calls Trainer's webhooks, which run in this
// process as Trainer's controller manager runs them in a cluster.
type trainerServer struct {
	// client is a user's: what it creates goes through the API server's
	// admission, Trainer's webhooks included.
	client client.Client
	// cache is what Trainer's webhooks read runtimes from.
	cache client.Reader
	// scheme types the objects the cache is asked for.
	scheme *runtime.Scheme
}

// startTrainer starts the API server with Trainer's CRDs and webhook
// configurations, then Trainer's webhook server and runtimes in a manager,
// as Trainer's test/integration/framework does; both stop when t ends.
func startTrainer(t *testing.T) *trainerServer {
	assets := controlPlaneAssets(t)
	ctrllog.SetLogger(logr.Discard())
	trainerDir := moduleDir(t, "github.com/kubeflow/trainer/v2")
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		UseExistingCluster:    new(false),
		CRDDirectoryPaths:     []string{filepath.Join(trainerDir, "manifests", "base", "crds")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{webhookConfigurations(t, filepath.Join(trainerDir, "manifests", "base", "webhook"))},
		},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd from %s: %v", assets, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping kube-apiserver and etcd: %v", err)
		}
	})

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, trainer.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	hooks := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    hooks.LocalServingHost,
			Port:    hooks.LocalServingPort,
			CertDir: hooks.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runtimes, err := runtimecore.New(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), nil)
	if err != nil {
		cancel()
		t.Fatalf("Trainer's runtimes: %v", err)
	}
	if kind, err := webhooks.Setup(mgr, runtimes); err != nil {
		cancel()
		t.Fatalf("Trainer's %s webhook: %v", kind, err)
	}
	var stopErr error
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		stopErr = mgr.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
		if stopErr != nil {
			t.Errorf("Trainer's webhook server: %v", stopErr)
		}
	})
	waitServing(ctx, t, mgr, stopped, &stopErr)
	return &trainerServer{client: c, cache: mgr.GetClient(), scheme: scheme}
}

// waitServing waits until Trainer's webhook server answers TLS and the
// manager's cache has synced: before that, the API server's calls fail
// (the webhooks' failurePolicy is Fail) for reasons no case is about.
func waitServing(ctx context.Context, t *testing.T, mgr ctrl.Manager, stopped <-chan struct{}, stopErr *error) {
	started := mgr.GetWebhookServer().StartedChecker()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case <-stopped:
			return false, fmt.Errorf("the manager stopped: %w", *stopErr)
		default:
		}
		return started(nil) == nil, nil
	})
	if err != nil {
		t.Fatalf("Trainer's webhook server does not answer: %v", err)
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the manager's cache does not sync")
	}
}

// controlPlaneAssets is the folder that holds kube-apiserver and etcd.
func controlPlaneAssets(t *testing.T) string {
	dir := os.Getenv(assetsEnv)
	if dir == "" {
		dir = filepath.Join("..", "..", ".cache", "bin")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var missing []error
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			missing = append(missing, fmt.Errorf("%s is not in %s", name, dir))
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("%v: run hack/cluster-tools.sh (make e2e does), or point %s at a folder that has them", errors.Join(missing...), assetsEnv)
		if os.Getenv(requireToolsEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// webhookConfigurations builds Trainer's webhook kustomization as its
// release installs it: its patches add the object selector that lets a
// runtime labelled trainer.kubeflow.org/webhook-validation: disabled (as
// Trainer's shipped runtimes are) skip the runtime webhooks. It returns the
// file envtest installs them from; envtest points their clientConfig at
// the local webhook server.
func webhookConfigurations(t *testing.T, kustomization string) string {
	built, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), kustomization)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", kustomization, err)
	}
	out, err := built.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "webhooks.yaml")
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// waitCached waits until the cache Trainer's webhooks read from holds obj
// as created: the TrainJob webhook looks its runtime up there, and a
// runtime of the same name from an earlier case must not stand in for it.
func (s *trainerServer) waitCached(t *testing.T, obj client.Object) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	typed, err := s.scheme.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	cached, ok := typed.(client.Object)
	if !ok {
		t.Fatalf("%s is no client.Object", gvk)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := s.cache.Get(ctx, client.ObjectKeyFromObject(obj), cached); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cached.GetUID() == obj.GetUID(), nil
	})
	if err != nil {
		t.Fatalf("Trainer's cache does not see %s %s: %v", gvk.Kind, obj.GetName(), err)
	}
}
