// Package workload builds what every job kind renders alike: objects whose
// metadata comes from the job, the headless Service that names the job's
// pods, batch/v1 Job specs from a run policy, and pod templates prepared for
// one role of the job.
package workload

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/kueue"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/ynode"
)

// Owner is the job whose objects are rendered.
type Owner struct {
	Name      string
	Namespace string
	// Labels and Annotations are the job's own, passed on to what it renders.
	Labels      map[string]string
	Annotations map[string]string
	// Subdomain is the headless Service that names the job's pods, when
	// its kind's is not handoff.ServiceName's.
	Subdomain string
}

// ServiceName is the headless Service that names the job's pods.
func (o Owner) ServiceName() string {
	if o.Subdomain != "" {
		return o.Subdomain
	}
	return handoff.ServiceName(o.Name)
}

// Object starts a rendered object: its metadata carries the job's namespace,
// labels and annotations, but Kueue's (see package kueue), and the labels
// own adds.
func (o Owner) Object(apiVersion, kind, name string, own map[string]string, spec ...any) *yaml.RNode {
	lbls := kueue.Without(o.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	maps.Copy(lbls, own)
	var namespace *string
	if o.Namespace != "" {
		namespace = &o.Namespace
	}
	var annotations *yaml.Node
	if inherited := InheritedAnnotations(o.Annotations); len(inherited) > 0 {
		annotations = ynode.StringMap(inherited)
	}
	meta := ynode.Map("name", name, "namespace", namespace, "labels", ynode.StringMap(lbls), "annotations", annotations)
	fields := append([]any{"apiVersion", apiVersion, "kind", kind, "metadata", meta}, spec...)
	return yaml.NewRNode(ynode.Map(fields...))
}

// HeadlessService is a Service without a cluster IP whose DNS records name
// the selected pods.
func (o Owner) HeadlessService(name string, selector map[string]string) *yaml.RNode {
	return o.Object("v1", "Service", name, handoff.JobLabels(o.Name),
		"spec", ynode.Map("clusterIP", "None", "selector", ynode.StringMap(selector)))
}

// PodTemplate starts editing a replica's template for one role of the job:
// labels, restart policy and the DNS settings every pod of the job shares.
func (o Owner) PodTemplate(template *yaml.RNode, path *field.Path, role, restartPolicy string) (*pod.Template, []result.Warning) {
	t := pod.NewTemplate(template, path)
	t.AddLabels(kueue.PodLabels(o.Labels), false)
	t.AddLabels(handoff.RoleLabels(o.Name, role), true)
	var warnings []result.Warning
	warnings = append(warnings, Overridden(t, "restartPolicy", restartPolicy, "the replica's restartPolicy applies")...)
	warnings = append(warnings, Overridden(t, "subdomain", o.ServiceName(), "the job's Service names its pods")...)
	if t.Bool("hostNetwork") {
		// Otherwise a host-network pod resolves with the node's DNS, which
		// knows no Service.
		t.SetDefault("dnsPolicy", ynode.String("ClusterFirstWithHostNet"))
	}
	return t, warnings
}

// Overridden sets a pod spec field trainfn owns, warning when the template
// had set it to something else.
func Overridden(t *pod.Template, name, value, why string) []result.Warning {
	replaced := t.Set(name, ynode.String(value))
	if replaced == nil || replaced.Value == value {
		return nil
	}
	return []result.Warning{{Field: t.Path(name), Message: fmt.Sprintf("replaced by %s: %s", value, why)}}
}

// StatefulSet runs the pods of one role of the job under the job's
// Service, which names pod i's host <name>-i, all started at once. Nil
// replicas leave the count to run time: to whoever scales the StatefulSet,
// so that re-applying the rendered output never resets it.
func (o Owner) StatefulSet(name, role string, replicas *int32, t *pod.Template) *yaml.RNode {
	selector := handoff.RoleLabels(o.Name, role)
	return o.Object("apps/v1", "StatefulSet", name, selector,
		"spec", ynode.Map(
			"replicas", replicas,
			"podManagementPolicy", "Parallel",
			"serviceName", o.ServiceName(),
			"selector", ynode.Map("matchLabels", ynode.StringMap(selector)),
			"template", t.Node()))
}

// Annotate adds annotations to a rendered object, in key order.
func Annotate(obj *yaml.RNode, annotations map[string]string) {
	meta := obj.Field("metadata").Value
	existing := meta.Field("annotations")
	if existing == nil || existing.Value.IsNil() {
		// The render's own objects have a metadata mapping, which a field
		// can always be set in.
		_ = meta.PipeE(yaml.SetField("annotations", yaml.NewRNode(ynode.Map())))
		existing = meta.Field("annotations")
	}
	node := existing.Value.YNode()
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		// Quoted: a YAML 1.1 reader would take 1:3 for a number.
		v := ynode.String(annotations[k])
		v.Style = yaml.DoubleQuotedStyle
		node.Content = append(node.Content, ynode.String(k), v)
	}
}

// managementPrefixes mark annotations that belong to the tools moving a
// document around (kustomize, kpt, kubectl) or configure trainfn's render,
// not to the job. Carried onto the objects, they would also enter the
// job's render digest, so that rearranging a kustomization (kustomize's
// buildMetadata records the transformers a document went through) would
// restart the job.
var managementPrefixes = []string{
	"config.kubernetes.io/",
	"alpha.config.kubernetes.io/",
	"internal.config.kubernetes.io/",
	"config.k8s.io/",
	"kustomize.config.k8s.io/",
	"kubectl.kubernetes.io/",
	options.AnnotationPrefix,
}

// InheritedAnnotations are the job's annotations its rendered objects carry:
// all but those of the tools that handled the job's document, and Kueue's,
// which would change how Kueue admits a Job or a StatefulSet.
func InheritedAnnotations(annotations map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range annotations {
		if !kueue.Own(k) && !slices.ContainsFunc(managementPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out[k] = v
		}
	}
	return out
}
