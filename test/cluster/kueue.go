package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// KueueModule is the Kueue release the suites run: the one hack/tools/kueue
// builds the controller of (TestKueueModuleIsTheBuiltOne keeps the two
// alike), whose CRDs and webhook configurations come from the same module.
const KueueModule = "sigs.k8s.io/kueue@v0.19.2"

// KueueNamespace is where Kueue keeps its own objects, as its release
// manifests install it.
const KueueNamespace = "kueue-system"

// Names Kueue's internal certificate management derives from its
// configuration: the webhook Service's name gives the DNS name the serving
// certificate is for and the webhook configurations it injects its CA
// into (Kueue's pkg/util/cert).
const (
	kueueWebhookService = "kueue-webhook-service"
	kueueWebhookSecret  = "kueue-webhook-server-cert"
	kueueWebhookPrefix  = "kueue-"
)

// kueueConversionCRDs are the CRDs Kueue converts between versions itself,
// as its release manifests configure them (config/components/crd).
var kueueConversionCRDs = []string{
	"localqueues.kueue.x-k8s.io",
	"clusterqueues.kueue.x-k8s.io",
	"cohorts.kueue.x-k8s.io",
	"workloads.kueue.x-k8s.io",
	"multikueueclusters.kueue.x-k8s.io",
}

// StartKueue installs Kueue on the cluster as its release manifests do
// (CRDs, conversion and admission webhooks, the controller manager with
// its shipped configuration) and returns once its webhooks answer. The
// controller runs here as a process, not in a pod; its webhooks are called
// at a loopback URL rather than through a Service, since nothing here
// routes a Service's address.
//
// Kueue manages its own certificates: started without, it reads a fixed
// path that is a pod's mounted Secret. So the Secret its rotator reads is
// made here, with a serving certificate for both the name the rotator
// checks and the loopback address the API server calls, and the rotator
// keeps it as valid.
func (c *Cluster) StartKueue(ctx context.Context) error {
	bin, err := Binary("kueue")
	if err != nil {
		return fmt.Errorf("%w (hack/tools.sh e2e builds it)", err)
	}
	module, err := ModuleDir(ctx, KueueModule)
	if err != nil {
		return err
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	webhookPort, healthPort, visibilityPort := ports[0], ports[1], ports[2]
	dir := filepath.Join(c.Dir, "kueue")
	certDir := filepath.Join(dir, "certs")
	if err = os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	pki, err := newServingPKI("kueue-ca", kueueWebhookService+"."+KueueNamespace+".svc", net.IPv4(127, 0, 0, 1))
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"tls.crt": pki.cert, "tls.key": pki.key} {
		if err = os.WriteFile(filepath.Join(certDir, name), data, 0o600); err != nil {
			return err
		}
	}
	if err = c.kueueSecret(ctx, pki); err != nil {
		return err
	}
	url := "https://" + net.JoinHostPort("127.0.0.1", webhookPort)
	if err = c.installKueueCRDs(ctx, module, url, pki.caCert); err != nil {
		return err
	}
	if err = c.installKueueWebhooks(ctx, module, url, pki.caCert); err != nil {
		return err
	}
	cfg, err := kueueConfig(module, webhookPort, healthPort, visibilityPort, certDir)
	if err != nil {
		return err
	}
	// JSON is YAML: Kueue reads it as its configuration file.
	config := filepath.Join(dir, "config.yaml")
	if err = os.WriteFile(config, cfg, 0o600); err != nil {
		return err
	}
	if err = c.Run("kueue", bin, "--config", config, "--kubeconfig", c.Kubeconfig); err != nil {
		return err
	}
	return c.Wait(ctx, "kueue", 2*time.Minute, func(ctx context.Context) error {
		if err := healthy(ctx, "http://127.0.0.1:"+healthPort+"/readyz"); err != nil {
			return err
		}
		// Ready is not yet serving: a dry-run create calls the
		// mutating and validating webhooks of a ResourceFlavor.
		flavor := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
			"metadata": map[string]any{"name": "readiness-probe"},
		}}
		data, err := json.Marshal(flavor)
		if err != nil {
			return err
		}
		return c.Client.CoreV1().RESTClient().Post().AbsPath("/apis/kueue.x-k8s.io/v1beta2/resourceflavors").
			Param("dryRun", "All").Body(data).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	})
}

// kueueSecret makes the Secret Kueue's certificate rotator reads.
func (c *Cluster) kueueSecret(ctx context.Context, pki *servingPKI) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: kueueWebhookSecret, Namespace: KueueNamespace},
		Data:       map[string][]byte{"ca.crt": pki.caCert, "ca.key": pki.caKey, "tls.crt": pki.cert, "tls.key": pki.key},
	}
	_, err := c.Client.CoreV1().Secrets(KueueNamespace).Create(ctx, secret, metav1.CreateOptions{})
	return err
}

// installKueueCRDs installs Kueue's CRDs, those it converts calling its
// conversion webhook at url.
func (c *Cluster) installKueueCRDs(ctx context.Context, module, url string, ca []byte) error {
	files, err := filepath.Glob(filepath.Join(module, "config", "components", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %s: %v", module, err)
	}
	var crds []*unstructured.Unstructured
	for _, file := range files {
		objs, err := ReadObjects(file)
		if err != nil {
			return err
		}
		crds = append(crds, objs...)
	}
	for _, crd := range crds {
		for _, name := range kueueConversionCRDs {
			if crd.GetName() != name {
				continue
			}
			err := unstructured.SetNestedMap(crd.Object, map[string]any{
				"strategy": "Webhook",
				"webhook": map[string]any{
					"clientConfig":             map[string]any{"url": url + "/convert", "caBundle": base64.StdEncoding.EncodeToString(ca)},
					"conversionReviewVersions": []any{"v1"},
				},
			}, "spec", "conversion")
			if err != nil {
				return err
			}
		}
	}
	return c.InstallCRDObjects(ctx, crds)
}

// installKueueWebhooks creates Kueue's admission webhook configurations
// from its module, named as its release manifests name them, each webhook
// called at url; those of the jobs' kinds, not of Kueue's own, are limited
// to the namespaces Kueue manages, as the release's kustomization limits
// them.
func (c *Cluster) installKueueWebhooks(ctx context.Context, module, url string, ca []byte) error {
	objs, err := ReadObjects(filepath.Join(module, "config", "components", "webhook", "manifests.yaml"))
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	notSystem := map[string]any{"matchExpressions": []any{map[string]any{
		"key": corev1.LabelMetadataName, "operator": "NotIn", "values": []any{"kube-system", KueueNamespace},
	}}}
	for _, obj := range objs {
		webhooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
		if err != nil {
			return err
		}
		for i, w := range webhooks {
			w := w.(map[string]any)
			path, _, _ := unstructured.NestedString(w, "clientConfig", "service", "path")
			w["clientConfig"] = map[string]any{"url": url + path, "caBundle": base64.StdEncoding.EncodeToString(ca)}
			if !ofKueuesKinds(w) {
				w["namespaceSelector"] = notSystem
			}
			webhooks[i] = w
		}
		if err := unstructured.SetNestedSlice(obj.Object, webhooks, "webhooks"); err != nil {
			return err
		}
		obj.SetName(kueueWebhookPrefix + obj.GetName())
		resource := admissionv1.SchemeGroupVersion.WithResource(strings.ToLower(obj.GetKind()) + "s")
		if _, err := dyn.Resource(resource).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// ofKueuesKinds tells a webhook of Kueue's own kinds (ClusterQueues,
// Workloads...), which is called in every namespace.
func ofKueuesKinds(webhook map[string]any) bool {
	rules, _, _ := unstructured.NestedSlice(webhook, "rules")
	for _, r := range rules {
		groups, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "apiGroups")
		if !slices.Equal(groups, []string{"kueue.x-k8s.io"}) {
			return false
		}
	}
	return len(rules) > 0
}

// kueueConfig is Kueue's configuration: the one its release ships
// (config/components/manager/controller_manager_config.yaml), its
// integrations, concurrency and client rates as they are there, with the
// addresses and certificates of a process beside the control plane, and
// no leader election, for one replica. Feature gates are left at the
// release's defaults.
func kueueConfig(module, webhookPort, healthPort, visibilityPort, certDir string) ([]byte, error) {
	objs, err := ReadObjects(filepath.Join(module, "config", "components", "manager", "controller_manager_config.yaml"))
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 || objs[0].GetKind() != "Configuration" {
		return nil, fmt.Errorf("%s ships no one Configuration", KueueModule)
	}
	port := func(p string) any { n, _ := strconv.Atoi(p); return n }
	cfg := objs[0].Object
	cfg["namespace"] = KueueNamespace
	cfg["health"] = map[string]any{"healthProbeBindAddress": "127.0.0.1:" + healthPort}
	cfg["metrics"] = map[string]any{"bindAddress": "0"}
	cfg["webhook"] = map[string]any{"host": "127.0.0.1", "port": port(webhookPort), "certDir": certDir}
	cfg["visibilityServer"] = map[string]any{"bindAddress": "127.0.0.1", "bindPort": port(visibilityPort)}
	cfg["internalCertManagement"] = map[string]any{"enable": true, "webhookServiceName": kueueWebhookService, "webhookSecretName": kueueWebhookSecret}
	cfg["leaderElection"] = map[string]any{"leaderElect": false}
	return json.Marshal(cfg)
}
