//go:build e2e

package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// gitOps is the field manager the rendered output is applied as: Argo CD's
// with server-side apply.
const gitOps = "argocd-controller"

// render runs `trainfn render` on a job spec, as a GitOps pipeline does.
func render(t testing.TB, spec string) []*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(trainfn, "render", path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("trainfn render: %v\n%s", err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("reading trainfn's output: %v", err)
		}
		if obj != nil {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}

// apply applies objects to a namespace with server-side apply under a
// field manager, forced as Argo CD and Flux force it, or not, in which case
// a field another manager set differently is a conflict.
func apply(ctx context.Context, ns, manager string, force bool, objs []*unstructured.Unstructured) error {
	var errs []error
	for _, obj := range objs {
		res, err := resourceOf(obj)
		if err != nil {
			return err
		}
		obj = obj.DeepCopy()
		obj.SetNamespace(ns)
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = res.Namespace(ns).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
			FieldManager: manager, Force: &force, FieldValidation: metav1.FieldValidationStrict,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// live reads an object back from the cluster.
func live(ctx context.Context, ns string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res, err := resourceOf(obj)
	if err != nil {
		return nil, err
	}
	return res.Namespace(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
}

func resourceOf(obj *unstructured.Unstructured) (dynamic.NamespaceableResourceInterface, error) {
	c, err := dynamicClients()
	if err != nil {
		return nil, err
	}
	gvk := obj.GroupVersionKind()
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return c.dynamic.Resource(mapping.Resource), nil
}

// dynamicClients are shared by every apply, so that discovery runs once.
var dynamicClients = sync.OnceValues(func() (*clients, error) {
	dyn, err := dynamic.NewForConfig(kube.Config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Client.Discovery()))
	return &clients{dyn, mapper}, nil
})

type clients struct {
	dynamic *dynamic.DynamicClient
	mapper  meta.RESTMapper
}
