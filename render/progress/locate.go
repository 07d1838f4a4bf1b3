package progress

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// find is the path, in the job's document, of the field child of the first
// item that match takes, of a list under the key it is given: the pass
// meets a workload's template, and the user wrote the job's. A template
// that came from elsewhere (a TrainJob's runtime) has no place in the
// document: it is reported where the job turns progress on, or at its
// spec when the function config does, and the detail says so.
func (p *pass) find(match func(key string, item *yaml.Node) bool, child string) (*field.Path, string) {
	if at := search(p.doc, nil, match); at != nil {
		return at.Child(child), ""
	}
	const elsewhere = " (in a pod template the job's spec takes from elsewhere, such as a TrainJob's runtime)"
	if p.at != nil {
		return p.at, elsewhere
	}
	return field.NewPath("spec"), elsewhere
}

// search walks n, at path at, depth first in document order.
func search(n *yaml.Node, at *field.Path, match func(key string, item *yaml.Node) bool) *field.Path {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		here := at.Child(key)
		switch value.Kind {
		case yaml.MappingNode:
			if found := search(value, here, match); found != nil {
				return found
			}
		case yaml.SequenceNode:
			for j, item := range value.Content {
				if item.Kind == yaml.MappingNode && ynode.Get(item, "name") != nil && match(key, item) {
					return here.Index(j)
				}
				if found := search(item, here.Index(j), match); found != nil {
					return found
				}
			}
		}
	}
	return nil
}
