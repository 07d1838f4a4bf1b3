package status

import (
	"context"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/trainfn/trainfn/kubeclient"
)

// NewClient reads from the API server. The API server's warnings (a
// deprecation, say) are written to warnings, as kubectl writes them.
//
// It knows only the three API groups a job's objects are in: client-go's
// clientset, or controller-runtime's client with it, would link every
// group's types into trainfn, and a KRM function started once per build
// would pay for their registration at every start.
func NewClient(config *rest.Config, warnings io.Writer) (Lister, error) {
	clients, err := kubeclient.New(config, warnings)
	if err != nil {
		return nil, err
	}
	var l restLister
	if l.core, err = clients.For(corev1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	if l.apps, err = clients.For(appsv1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	if l.batch, err = clients.For(batchv1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	return &l, nil
}

// restLister lists through a REST client per API group version.
type restLister struct{ core, apps, batch rest.Interface }

func (l *restLister) ListJobs(ctx context.Context, namespace string, selector map[string]string) ([]batchv1.Job, error) {
	var list batchv1.JobList
	err := listInto(ctx, l.batch, "jobs", namespace, selector, &list)
	return list.Items, err
}

func (l *restLister) ListStatefulSets(ctx context.Context, namespace string, selector map[string]string) ([]appsv1.StatefulSet, error) {
	var list appsv1.StatefulSetList
	err := listInto(ctx, l.apps, "statefulsets", namespace, selector, &list)
	return list.Items, err
}

func (l *restLister) ListPods(ctx context.Context, namespace string, selector map[string]string) ([]corev1.Pod, error) {
	var list corev1.PodList
	err := listInto(ctx, l.core, "pods", namespace, selector, &list)
	return list.Items, err
}

// listInto lists resource into list, whole: a status reads every object of
// a job at once, as the reconciler's cache would hold them.
func listInto(ctx context.Context, c rest.Interface, resource, namespace string, selector map[string]string, list runtime.Object) error {
	return c.Get().
		Namespace(namespace).
		Resource(resource).
		VersionedParams(&metav1.ListOptions{LabelSelector: k8slabels.SelectorFromSet(selector).String()}, metav1.ParameterCodec).
		Do(ctx).
		Into(list)
}
