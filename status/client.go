package status

import (
	"context"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// NewClient reads from the API server. The API server's warnings (a
// deprecation, say) are written to warnings, as kubectl writes them.
//
// It knows only the three API groups a job's objects are in: client-go's
// clientset, or controller-runtime's client with it, would link every
// group's types into trainfn, and a KRM function started once per build
// would pay for their registration at every start.
func NewClient(config *rest.Config, warnings io.Writer) (Lister, error) {
	config = rest.CopyConfig(config)
	config.WarningHandler = rest.NewWarningWriter(warnings, rest.WarningWriterOptions{Deduplicate: true})
	// Named in the API server's logs and audit as client-go's own clients
	// are, by binary, version and platform.
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	codecs := serializer.NewCodecFactory(scheme).WithoutConversion()
	// One connection pool for the three clients.
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	clientFor := func(gv schema.GroupVersion) (rest.Interface, error) {
		c := rest.CopyConfig(config)
		c.GroupVersion = &gv
		c.APIPath = "/apis"
		if gv.Group == "" {
			c.APIPath = "/api"
		}
		c.NegotiatedSerializer = codecs
		rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
		if err != nil {
			return nil, fmt.Errorf("connecting to the API server: %w", err)
		}
		return rc, nil
	}
	var l restLister
	if l.core, err = clientFor(corev1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	if l.apps, err = clientFor(appsv1.SchemeGroupVersion); err != nil {
		return nil, err
	}
	if l.batch, err = clientFor(batchv1.SchemeGroupVersion); err != nil {
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
