package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/cache"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/engine"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync"
	synccommon "github.com/argoproj/argo-cd/gitops-engine/pkg/sync/common"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/utils/kube"

	cdcommon "github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
)

// syncManifests syncs manifests into a namespace as Argo CD's application
// controller does for an Application with automated sync: the objects are
// marked as the Application's with Argo CD's annotation tracking, the live
// state is read through gitops-engine's cluster cache, and gitops-engine's
// sync applies them with the options the controller sets (controller/sync.go
// in Argo CD), so each object's own sync options (Force, Replace,
// ServerSideApply) and its live copy's are read by Argo CD's code, not
// described. One line per object goes to standard output; the status is 1
// when the operation or any object failed, with Argo CD's message.
func syncManifests(args []string) int {
	flags := flag.NewFlagSet("sync", flag.ContinueOnError)
	kubeconfig := flags.String("kubeconfig", "", "the cluster's kubeconfig")
	namespace := flags.String("namespace", "", "the Application's destination namespace")
	app := flags.String("app", "training", "the Application's name, for resource tracking")
	serverSide := flags.Bool("server-side-apply", false, "the Application's syncOptions hold ServerSideApply=true")
	timeout := flags.Duration("timeout", 2*time.Minute, "how long the sync may take")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *kubeconfig == "" || *namespace == "" || flags.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: argocd-harness sync --kubeconfig FILE --namespace NS [--server-side-apply] MANIFEST...")
		return 2
	}
	if err := runSync(*kubeconfig, *namespace, *app, *serverSide, *timeout, flags.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}

func runSync(kubeconfig, namespace, app string, serverSide bool, timeout time.Duration, files []string) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	tracking := argo.NewResourceTracking()
	var target []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		objs, err := kube.SplitYAML(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, obj := range objs {
			if obj.GetNamespace() == "" {
				obj.SetNamespace(namespace)
			}
			if err := tracking.SetAppInstance(obj, cdcommon.LabelKeyAppInstance, app, namespace, v1alpha1.TrackingMethodAnnotation, ""); err != nil {
				return err
			}
			target = append(target, obj)
		}
	}

	clusterCache := cache.NewClusterCache(config,
		cache.SetNamespaces([]string{namespace}),
		// As Argo CD's controller does: the Application's objects are kept
		// whole in the cache, which is where the sync reads them from.
		cache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, _ bool) (any, bool) {
			name := tracking.GetAppName(un, cdcommon.LabelKeyAppInstance, v1alpha1.TrackingMethodAnnotation, "")
			return name, name != ""
		}))
	gitops := engine.NewEngine(config, clusterCache)
	stop, err := gitops.Run()
	if err != nil {
		return err
	}
	defer stop()

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	results, err := gitops.Sync(ctx, target, func(r *cache.Resource) bool { return r.Info == app },
		"0123456789abcdef0123456789abcdef01234567", namespace,
		// As the controller sets them for a sync of every resource, no
		// dry run, no prune, no Force of the whole operation.
		sync.WithOperationSettings(false, false, false, false),
		sync.WithManifestValidation(true),
		sync.WithServerSideApply(serverSide),
		sync.WithServerSideApplyManager(cdcommon.ArgoCDSSAManager),
		sync.WithClientSideApplyMigration(true, synccommon.DefaultClientSideApplyMigrationManager),
	)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "RESOURCE\tSTATUS\tMESSAGE")
	failed := 0
	for _, r := range results {
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.ResourceKey, r.Status, r.Message)
		if r.Status == synccommon.ResultCodeSyncFailed || r.HookPhase.Failed() {
			failed++
		}
	}
	w.Flush()
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d resources failed to sync", failed, len(results))
	}
	return nil
}
