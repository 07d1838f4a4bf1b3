// Package progress lets a job's pods report their training progress as
// Kubeflow Trainer's pods do (Trainer's KEP-2779, its TrainJobStatus
// plugin): every container gets the three variables Trainer's clients read
// (the Kubeflow SDK's update_trainjob_status, the transformers callback),
// and every pod a projected volume with a service account token for the
// progress server and the server's CA. The server is trainfn's reconciler,
// which serves Trainer's status path for every kind trainfn renders, checks
// that the token is a pod's of the job the path names, and records the
// report on the job's workload.
//
// The CA is not known at render time: the render writes the ConfigMap the
// pods read it from with no data, and the reconciler fills it, as it fills
// the discovery script of an elastic MPIJob's ConfigMap.
package progress

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// The variables Kubeflow Trainer's TrainJobStatus plugin sets, which its
// clients read: the token and the CA are paths, not values.
const (
	URLVariable    = "KUBEFLOW_TRAINER_SERVER_URL"
	CACertVariable = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
	TokenVariable  = "KUBEFLOW_TRAINER_SERVER_TOKEN"
)

// NamespaceVariable is the pod's namespace, read from the pod, which the
// URL names: the output names no namespace of its own unless the job does,
// and is applied to whichever namespace kubectl or kustomize chooses.
// DIJob's pods have it already, with the same value.
const NamespaceVariable = "TRAINFN_NAMESPACE"

// The volume every pod of a progress job gets.
const (
	VolumeName = "trainfn-progress"
	MountPath  = "/var/run/secrets/trainfn.dev/progress"
	// tokenFile is the token's file in the volume.
	tokenFile = "token"
	// TokenExpirationSeconds is the token's lifetime; the kubelet renews
	// it at 80% of it, and clients read the file again (the SDK every 5
	// minutes), as Trainer's tokens are.
	TokenExpirationSeconds = 3600
)

// plurals are the resources of the kinds trainfn renders, under which the
// progress server serves their status path.
var plurals = map[string]string{
	"MPIJob":     "mpijobs",
	"PyTorchJob": "pytorchjobs",
	"DIJob":      "dijobs",
	"TrainJob":   "trainjobs",
}

// StatusPath is Trainer's status path of a job, for any kind: the job's
// own group, version and resource, as the API server names it.
func StatusPath(apiVersion, kind, namespace, name string) (string, error) {
	plural, ok := plurals[kind]
	if !ok {
		return "", fmt.Errorf("no progress path for the kind %s", kind)
	}
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok || group == "" || version == "" {
		return "", fmt.Errorf("no progress path for the apiVersion %q: it names no group", apiVersion)
	}
	return fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s/%s/status", group, version, namespace, plural, name), nil
}

// URL is the value of URLVariable for a job's pods: the namespace is the
// pod's, which Kubernetes substitutes for $(NamespaceVariable).
func URL(server, apiVersion, kind, name string) (string, error) {
	path, err := StatusPath(apiVersion, kind, "$("+NamespaceVariable+")", name)
	if err != nil {
		return "", err
	}
	return "https://" + server + path, nil
}

// Render gives every pod template among objects, the workloads the job
// doc rendered into, what reporting progress to server (HOST:PORT) takes,
// and adds the ConfigMap of the server's CA before the first of them, so
// that it exists when their pods start. A volume or mount of the job's
// own in the way is an error at its place in doc; a variable of the job's
// own of the same name as Trainer's is replaced, as Trainer replaces it,
// with a warning.
func Render(doc *yaml.RNode, objects []*yaml.RNode, server string) ([]*yaml.RNode, []result.Warning, field.ErrorList) {
	meta, err := doc.GetMeta()
	if err != nil {
		return nil, nil, field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	url, err := URL(server, doc.GetApiVersion(), doc.GetKind(), meta.Name)
	if err != nil {
		return nil, nil, field.ErrorList{field.InternalError(nil, err)}
	}
	p := &pass{doc: doc.YNode(), url: url, ca: handoff.ProgressCAName(doc.GetKind(), meta.Name), at: switchPath(meta.Annotations)}
	first := -1
	for i, o := range objects {
		template := podTemplate(o)
		if template == nil {
			continue
		}
		if first < 0 {
			first = i
		}
		p.template(o, template)
	}
	if len(p.errs) > 0 {
		return nil, nil, p.errs
	}
	if first < 0 {
		return objects, p.warnings, nil
	}
	owner := workload.Owner{Name: meta.Name, Namespace: meta.Namespace, Labels: meta.Labels, Annotations: meta.Annotations}
	ca := owner.Object("v1", "ConfigMap", p.ca, handoff.JobLabels(meta.Name))
	workload.Annotate(ca, map[string]string{handoff.ProgressCA: "true"})
	out := make([]*yaml.RNode, 0, len(objects)+1)
	out = append(append(append(out, objects[:first]...), ca), objects[first:]...)
	return out, p.warnings, nil
}

// switchPath is where the job turns progress on: its annotation, when it
// has one; nil when the function config does.
func switchPath(annotations map[string]string) *field.Path {
	if _, ok := annotations[handoff.Progress]; ok {
		return field.NewPath("metadata", "annotations").Key(handoff.Progress)
	}
	return nil
}

// podTemplate is the pod template of a workload, a Job or a StatefulSet,
// copied in place so that editing it edits no other object; nil for an
// object of another kind.
func podTemplate(o *yaml.RNode) *yaml.Node {
	switch o.GetApiVersion() + " " + o.GetKind() {
	case "batch/v1 Job", "apps/v1 StatefulSet":
	default:
		return nil
	}
	spec := ynode.Get(o.YNode(), "spec")
	template := ynode.Get(spec, "template")
	if template == nil || template.Kind != yaml.MappingNode {
		return nil
	}
	copied := yaml.CopyYNode(template)
	ynode.Set(spec, "template", copied)
	return copied
}
