// Package gitopssync applies rendered objects to a cluster the way the
// GitOps tools do, with their own code, for the suites that check what
// happens when a job changes in Git: Flux through its apply engine
// (fluxcd/pkg/ssa), set up as kustomize-controller sets it up; Argo CD
// through argocd-harness, which runs gitops-engine's cluster cache and sync
// with the options Argo CD's application controller gives them.
package gitopssync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/ssa"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"
)

// Sync applies one revision's objects into a namespace and returns what
// the tool reported, and an error when the sync failed.
type Sync func(ctx context.Context, ns string, objs []*unstructured.Unstructured) (string, error)

// FluxForceSelector is the selector kustomize-controller gives its apply
// engine for a Kustomization with `force: false`, written with Flux's own
// constants: objects so annotated are recreated when applying them fails
// on an immutable field.
var FluxForceSelector = map[string]string{kustomizev1.GroupVersion.Group + "/force": kustomizev1.EnabledValue}

// FluxOptions are the apply options kustomize-controller uses for a
// Kustomization with `force: false`.
func FluxOptions() ssa.ApplyOptions {
	opts := ssa.DefaultApplyOptions()
	opts.ForceSelector = FluxForceSelector
	return opts
}

// Flux applies as kustomize-controller does: server-side, staged, under its
// field manager, with opts.
func Flux(config *rest.Config, opts ssa.ApplyOptions) (Sync, error) {
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(config, httpClient)
	if err != nil {
		return nil, err
	}
	c, err := client.New(config, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	manager := ssa.NewResourceManager(c, polling.NewStatusPoller(c, mapper, polling.Options{}),
		ssa.Owner{Field: "kustomize-controller", Group: kustomizev1.GroupVersion.Group})
	return func(ctx context.Context, ns string, objs []*unstructured.Unstructured) (string, error) {
		var inNamespace []*unstructured.Unstructured
		for _, o := range objs {
			o = o.DeepCopy()
			o.SetNamespace(ns)
			inNamespace = append(inNamespace, o)
		}
		changes, err := manager.ApplyAllStaged(ctx, inNamespace, opts)
		if changes == nil {
			return "", err
		}
		return changes.String(), err
	}, nil
}

// ArgoCD syncs as Argo CD's application controller does, in an Application
// that applies client-side (Argo CD's default) or, with serverSideApply,
// one whose syncOptions hold ServerSideApply=true. harness is the path of
// argocd-harness (hack/argocd-tools.sh builds it).
func ArgoCD(harness, kubeconfig string, serverSideApply bool) Sync {
	return func(ctx context.Context, ns string, objs []*unstructured.Unstructured) (_ string, err error) {
		manifests, err := os.CreateTemp("", "argocd-sync-*.yaml")
		if err != nil {
			return "", err
		}
		defer func() { err = errors.Join(err, os.Remove(manifests.Name())) }()
		for _, o := range objs {
			b, err := yaml.Marshal(o.Object)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(manifests, "---\n%s", b)
		}
		if err := manifests.Close(); err != nil {
			return "", err
		}
		args := []string{"sync", "--kubeconfig", kubeconfig, "--namespace", ns}
		if serverSideApply {
			args = append(args, "--server-side-apply")
		}
		// The harness stops a little before the context does, so that a sync
		// that runs out of time still reports what each object came to.
		if deadline, ok := ctx.Deadline(); ok {
			args = append(args, "--timeout", (time.Until(deadline) - 5*time.Second).Round(time.Second).String())
		}
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, harness, append(args, filepath.Clean(manifests.Name()))...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return out.String(), fmt.Errorf("argocd-harness sync: %w: %s", err, out.String())
		}
		return out.String(), nil
	}
}
