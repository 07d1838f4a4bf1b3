//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/test/cluster"
)

// fieldManager is who the suite applies as, the way a GitOps controller
// applies under its own name.
const fieldManager = "trainfn-e2e"

// withoutPassThrough drops the job kinds trainfn leaves to an operator: the
// API server only serves them with that operator's CRD installed.
func withoutPassThrough(t *testing.T, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var kept []*unstructured.Unstructured
	for _, obj := range objs {
		if functions.PassesThrough(obj.GetAPIVersion(), obj.GetKind()) {
			t.Logf("not applied: %s %s is passed through for an operator, whose CRD this cluster does not have", obj.GetKind(), obj.GetName())
			continue
		}
		kept = append(kept, obj)
	}
	return kept
}

// serverSideApply applies objects as Flux does, and Argo CD with
// ServerSideApply=true: server-side apply with strict field validation, each
// object placed in the namespace first, as kustomize's namespace field or a
// GitOps destination namespace does.
func serverSideApply(ctx context.Context, ns string, objs []*unstructured.Unstructured) error {
	clients, err := applyClients()
	if err != nil {
		return err
	}
	var errs []error
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := clients.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err))
			continue
		}
		obj = obj.DeepCopy()
		resource := clients.dynamic.Resource(mapping.Resource)
		var client dynamic.ResourceInterface = resource
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			obj.SetNamespace(ns)
			client = resource.Namespace(ns)
		}
		if err := applyOne(ctx, client, obj); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// applyOne server-side applies one object, refusing fields the API server
// does not know.
func applyOne(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = client.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager:    fieldManager,
		FieldValidation: metav1.FieldValidationStrict,
	})
	return err
}

// applyClients are the dynamic client and the mapper from kinds to the
// cluster's resources that every apply shares, so discovery runs once.
var applyClients = sync.OnceValues(func() (*clients, error) {
	dyn, err := dynamic.NewForConfig(kube.Config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Client.Discovery()))
	return &clients{dynamic: dyn, mapper: mapper}, nil
})

type clients struct {
	dynamic *dynamic.DynamicClient
	mapper  meta.RESTMapper
}

// kubectlApply applies a file with the real kubectl, server-side, into a
// namespace given only on the command line.
func kubectlApply(t *testing.T, ns, path string) error {
	kubectl, err := cluster.Binary("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kubectl, "--kubeconfig", kube.Kubeconfig, "apply", "--server-side",
		"--field-manager", fieldManager, "-n", ns, "-f", path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s", err, out.String())
	}
	t.Logf("kubectl apply -n %s:\n%s", ns, strings.TrimSpace(out.String()))
	return nil
}

// writeObjects writes objects as a YAML stream for kubectl.
func writeObjects(t *testing.T, objs []*unstructured.Unstructured) string {
	var b bytes.Buffer
	for _, obj := range objs {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	path := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
