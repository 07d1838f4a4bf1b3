package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// Applier applies objects with server-side apply, one request an object,
// as a GitOps controller does (Flux's kustomize-controller; Argo CD with
// ServerSideApply=true). What it learns of the API's kinds is kept from
// one apply to the next, as a controller that runs keeps it.
type Applier struct {
	dyn     dynamic.Interface
	mapper  meta.RESTMapper
	manager string
}

// NewApplier is an Applier that applies as the tests' administrator, under
// the field manager given.
func (c *Cluster) NewApplier(manager string) (*Applier, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))
	return &Applier{dyn: dyn, mapper: mapper, manager: manager}, nil
}

// Knows looks up the kinds of objs, so that applying them later asks
// nothing of the API's discovery; an error names a kind the API does not
// serve.
func (a *Applier) Knows(objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		if _, err := a.mapping(obj); err != nil {
			return err
		}
	}
	return nil
}

func (a *Applier) mapping(obj *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return mapping, nil
}

// Apply applies objs in their order, namespaced ones into namespace
// unless they name their own.
func (a *Applier) Apply(ctx context.Context, namespace string, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		mapping, err := a.mapping(obj)
		if err != nil {
			return err
		}
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		res := a.dyn.Resource(mapping.Resource)
		var target dynamic.ResourceInterface = res
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = namespace
			}
			target = res.Namespace(ns)
		}
		force := true
		if _, err := target.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: a.manager, Force: &force}); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// Apply applies objects with server-side apply as the tests' administrator,
// namespaced ones into namespace unless they name their own.
func (c *Cluster) Apply(ctx context.Context, namespace string, objs []*unstructured.Unstructured) error {
	a, err := c.NewApplier("trainfn-e2e")
	if err != nil {
		return err
	}
	return a.Apply(ctx, namespace, objs)
}
