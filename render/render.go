// Package render expands validated job specs into the native Kubernetes
// objects that run them. Rendering is pure: no clock, no randomness, no
// network, so the same spec always gives the same bytes. Each job kind has
// a package of its own; this one holds what they share.
package render

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
)

// Output is what rendering one job spec produces.
type Output struct {
	Objects  []*yaml.RNode
	Warnings []Warning
}

// Warning is something a user should know about a spec that still renders.
type Warning struct {
	Field   *field.Path
	Message string
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
// all but those of the tools that handled the job's document.
func InheritedAnnotations(annotations map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range annotations {
		if !slices.ContainsFunc(managementPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out[k] = v
		}
	}
	return out
}
