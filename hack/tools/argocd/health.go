package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/health"
	hookutil "github.com/argoproj/argo-cd/gitops-engine/pkg/sync/hook"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync/ignore"
	"github.com/argoproj/argo-cd/gitops-engine/pkg/utils/kube"

	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

// healthUsage is the health subcommand's interface; main.go's header
// carries it too.
const healthUsage = `usage: argocd-harness health --argocd-cm FILE < OBJECTS

Reads live objects (a YAML or JSON stream; a kind: List is read item by
item, as kubectl get -o yaml writes it) and writes, for each, one line

	GROUP/KIND<TAB>NAMESPACE/NAME<TAB>STATUS<TAB>MESSAGE

(GROUP empty for the core group, NAMESPACE empty for a cluster-scoped
object; STATUS "-" for an object Argo CD gives no health or does not count,
MESSAGE then saying why; line breaks in a message become spaces), then the
Application's health on a last line of its own:

	Application<TAB>STATUS

Each object's health is Argo CD's: gitops-engine's GetResourceHealth with the
Lua health checks argocd-cm holds (resource.customizations), as the
application controller computes it, and the Application's is its worst
(health.IsWorse), skipping what the controller skips (a child
Application that is Missing or Unknown is shown and not counted). FILE is an argocd-cm
ConfigMap, or a patch of it (its namespace may be left out). Exits 0; 2 on a
bad flag or input.`

// healthOf computes what the application controller shows for live
// objects: each one's health, then the Application's.
func healthOf(args []string, stdin io.Reader, stdout io.Writer) int {
	flags := flag.NewFlagSet("health", flag.ContinueOnError)
	flags.Usage = func() { fmt.Fprintln(os.Stderr, healthUsage) }
	cmFile := flags.String("argocd-cm", "", "the argocd-cm ConfigMap, or a patch of it, holding the health checks")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *cmFile == "" || flags.NArg() > 0 {
		fmt.Fprintln(os.Stderr, healthUsage)
		return 2
	}
	// Argo CD's settings code logs its informers' start at info.
	log.SetLevel(log.WarnLevel)
	overrides, err := readResourceOverrides(*cmFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: standard input:", err)
		return 2
	}
	objs, err := splitObjects(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: standard input:", err)
		return 2
	}
	app := applicationHealth(objs, overrides)
	for _, r := range app.Resources {
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", r.GroupKind, r.Name, r.Status, oneLine(r.Message))
	}
	fmt.Fprintf(stdout, "Application\t%s\n", app.Status)
	return 0
}

// readResourceOverrides reads the resource customizations of an argocd-cm
// through Argo CD's settings code, as the controller reads them.
func readResourceOverrides(path string) (map[string]v1alpha1.ResourceOverride, error) {
	var cm corev1.ConfigMap
	if err := readStrict(path, &cm); err != nil {
		return nil, err
	}
	if cm.Kind != "ConfigMap" || cm.Name != common.ArgoCDConfigMapName {
		return nil, fmt.Errorf("%s: want the %s ConfigMap, got %s %q", path, common.ArgoCDConfigMapName, cm.Kind, cm.Name)
	}
	// A patch carries neither: the installed ConfigMap has both, and Argo
	// CD's settings read only a ConfigMap with that label.
	if cm.Namespace == "" {
		cm.Namespace = "argocd"
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["app.kubernetes.io/part-of"] = "argocd"
	mgr := settings.NewSettingsManager(context.Background(), fake.NewClientset(&cm), cm.Namespace)
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return overrides, nil
}

// splitObjects reads a stream of objects, a List's items one by one.
func splitObjects(in []byte) ([]*unstructured.Unstructured, error) {
	docs, err := kube.SplitYAML(in)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for i, doc := range docs {
		if !doc.IsList() {
			if doc.GetKind() == "" || doc.GetAPIVersion() == "" {
				return nil, fmt.Errorf("document %d: an object needs apiVersion and kind", i+1)
			}
			objs = append(objs, doc)
			continue
		}
		list, err := doc.ToList()
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		for j := range list.Items {
			objs = append(objs, &list.Items[j])
		}
	}
	if len(objs) == 0 {
		return nil, errors.New("no object")
	}
	return objs, nil
}

// resourceHealth is one object's line.
type resourceHealth struct {
	GroupKind, Name string
	Status          health.HealthStatusCode
	Message         string
}

// appHealth is an Application's health and its resources'.
type appHealth struct {
	Status    health.HealthStatusCode
	Resources []resourceHealth
}

// notCounted is the status of an object the Application's health leaves out.
const notCounted health.HealthStatusCode = "-"

// applicationHealth follows the application controller's
// setApplicationHealth (controller/health.go in Argo CD, unexported) for
// live objects: hooks, objects that ask to be ignored and objects with no
// health do not count; the worst health of the rest is the Application's,
// Healthy when none counts.
func applicationHealth(objs []*unstructured.Unstructured, overrides map[string]v1alpha1.ResourceOverride) appHealth {
	app := appHealth{Status: health.HealthStatusHealthy}
	healthOverrides := lua.ResourceHealthOverrides(overrides)
	for _, obj := range objs {
		gk := obj.GroupVersionKind().GroupKind()
		r := resourceHealth{GroupKind: gk.Group + "/" + gk.Kind, Name: obj.GetNamespace() + "/" + obj.GetName(), Status: notCounted}
		switch {
		case hookutil.IsHook(obj) || ignore.Ignore(obj):
			r.Message = "a hook: not counted"
		case obj.GetAnnotations()[common.AnnotationIgnoreHealthCheck] == "true":
			r.Message = common.AnnotationIgnoreHealthCheck + ": not counted"
		default:
			// An error comes with an Unknown health, which counts, as in
			// the controller.
			h, _ := health.GetResourceHealth(obj, healthOverrides)
			if h == nil {
				r.Message = "no health check"
				break
			}
			r.Status, r.Message = h.Status, h.Message
			if gk == (schema.GroupKind{Group: application.Group, Kind: application.ApplicationKind}) &&
				(h.Status == health.HealthStatusMissing || h.Status == health.HealthStatusUnknown) {
				// A child Application's: shown, not counted.
				break
			}
			if health.IsWorse(app.Status, h.Status) {
				app.Status = h.Status
			}
		}
		app.Resources = append(app.Resources, r)
	}
	return app
}

// oneLine keeps a message on its line and in its column.
var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace
