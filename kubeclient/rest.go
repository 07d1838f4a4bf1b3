package kubeclient

import (
	"fmt"
	"io"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// Clients makes REST clients of the core, apps and batch API groups, the
// groups a job's objects are in, sharing one connection pool.
type Clients struct {
	config     *rest.Config
	httpClient *http.Client
	codecs     runtime.NegotiatedSerializer
}

// New prepares clients of config. The API server's warnings (a
// deprecation, say) are written to warnings, as kubectl writes them.
func New(config *rest.Config, warnings io.Writer) (*Clients, error) {
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
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	return &Clients{config: config, httpClient: httpClient, codecs: serializer.NewCodecFactory(scheme).WithoutConversion()}, nil
}

// For is a client of one API group version: corev1's, appsv1's or
// batchv1's.
func (c *Clients) For(gv schema.GroupVersion) (rest.Interface, error) {
	config := rest.CopyConfig(c.config)
	config.GroupVersion = &gv
	config.APIPath = "/apis"
	if gv.Group == "" {
		config.APIPath = "/api"
	}
	config.NegotiatedSerializer = c.codecs
	rc, err := rest.RESTClientForConfigAndClient(config, c.httpClient)
	if err != nil {
		return nil, fmt.Errorf("connecting to the API server: %w", err)
	}
	return rc, nil
}
