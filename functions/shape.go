package functions

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// shapeProblem says what keeps a document from being read as a Kubernetes
// object, "" when nothing does: the document is a mapping, and so are its
// metadata and metadata's labels and annotations when they are set.
// kyaml's getters (GetKind, GetName, GetAnnotations, ...) read whatever
// they find there as a mapping, and panic on a sequence of odd length, so
// no document meets them before this check.
func shapeProblem(n *yaml.RNode) string {
	if n.YNode().Kind != yaml.MappingNode {
		return "not a Kubernetes object: the document is not a mapping"
	}
	meta := ynode.Given(n.YNode(), yaml.MetadataField)
	if meta == nil {
		return ""
	}
	if meta.Kind != yaml.MappingNode {
		return "not a Kubernetes object: metadata is not a mapping"
	}
	for _, name := range []string{yaml.LabelsField, yaml.AnnotationsField} {
		if m := ynode.Given(meta, name); m != nil && m.Kind != yaml.MappingNode {
			return "not a Kubernetes object: metadata." + name + " is not a mapping"
		}
	}
	return ""
}
