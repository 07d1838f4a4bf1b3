// Package follow keeps the objects trainfn's jobs are made of up to date
// from the API server's watch, for `trainfn status -w` and `trainfn wait`:
// a list, then the watch's events, re-listing as client-go's informers do
// when the watch breaks, so a job is followed for as long as it takes.
package follow

import (
	"context"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/trainfn/trainfn/kubeclient"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status"
)

// Follower holds the trainfn objects of a namespace (all of them when "")
// as the watch last reported them.
type Follower struct {
	jobs, sets, pods cache.Store
	synced           []cache.InformerSynced
	changed          chan struct{}
}

// Start lists and watches the Jobs, StatefulSets and pods trainfn rendered
// in namespace until ctx ends, and returns once the first lists are in.
func Start(ctx context.Context, config *rest.Config, namespace string, warnings io.Writer) (*Follower, error) {
	clients, err := kubeclient.New(config, warnings)
	if err != nil {
		return nil, err
	}
	f := &Follower{changed: make(chan struct{}, 1)}
	for _, r := range []struct {
		gv       schema.GroupVersion
		resource string
		obj      runtime.Object
		store    *cache.Store
	}{
		{batchv1.SchemeGroupVersion, "jobs", &batchv1.Job{}, &f.jobs},
		{appsv1.SchemeGroupVersion, "statefulsets", &appsv1.StatefulSet{}, &f.sets},
		{corev1.SchemeGroupVersion, "pods", &corev1.Pod{}, &f.pods},
	} {
		c, err := clients.For(r.gv)
		if err != nil {
			return nil, err
		}
		lw := cache.NewFilteredListWatchFromClient(c, r.resource, namespace, func(o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(labels.Set{handoff.OperatorNameLabel: handoff.Operator}).String()
		})
		store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
			ListerWatcher: lw,
			ObjectType:    r.obj,
			Handler: cache.ResourceEventHandlerFuncs{
				AddFunc:    func(any) { f.notify() },
				UpdateFunc: func(any, any) { f.notify() },
				DeleteFunc: func(any) { f.notify() },
			},
		})
		*r.store = store
		f.synced = append(f.synced, informer.HasSynced)
		go informer.RunWithContext(ctx)
	}
	if !cache.WaitForCacheSync(ctx.Done(), f.synced...) {
		return nil, fmt.Errorf("listing the jobs' objects: %w", context.Cause(ctx))
	}
	return f, nil
}

// Changed receives once after any number of changes since it last did.
func (f *Follower) Changed() <-chan struct{} { return f.changed }

func (f *Follower) notify() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// Lister lists from the objects held, as status.NewClient's from the API
// server.
func (f *Follower) Lister() status.Lister { return lister{f} }

type lister struct{ f *Follower }

func (l lister) ListJobs(_ context.Context, namespace string, selector map[string]string) ([]batchv1.Job, error) {
	return listOf[batchv1.Job](l.f.jobs, namespace, selector), nil
}

func (l lister) ListStatefulSets(_ context.Context, namespace string, selector map[string]string) ([]appsv1.StatefulSet, error) {
	return listOf[appsv1.StatefulSet](l.f.sets, namespace, selector), nil
}

func (l lister) ListPods(_ context.Context, namespace string, selector map[string]string) ([]corev1.Pod, error) {
	return listOf[corev1.Pod](l.f.pods, namespace, selector), nil
}

// listOf copies the objects of store in namespace ("" for all) that carry
// every label of selector.
func listOf[T any, P interface {
	*T
	metav1.Object
}](store cache.Store, namespace string, selector map[string]string) []T {
	sel := labels.SelectorFromSet(selector)
	var out []T
	for _, item := range store.List() {
		obj, ok := item.(P)
		if !ok || (namespace != "" && obj.GetNamespace() != namespace) || !sel.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		out = append(out, *obj)
	}
	return out
}
