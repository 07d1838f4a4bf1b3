package ynode

import (
	"encoding/json"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FromTyped writes a Kubernetes type as a YAML node in block style, its
// fields in the Go type's order, without the empty fields the type writes
// anyway (a template's creationTimestamp, a container's resources).
func FromTyped(v any) (*yaml.Node, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// JSON is YAML: parsed as such, fields keep the Go type's order.
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	node := n.YNode()
	pruneEmpty(node)
	return node, nil
}

// pruneEmpty drops what the Go types write for fields left unset: null
// values and empty metadata and resources.
func pruneEmpty(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			pruneEmpty(c)
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	kept := n.Content[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		k.Style = 0
		pruneEmpty(v)
		if v.Tag == "!!null" || (k.Value == "creationTimestamp" && v.Value == "") ||
			((k.Value == "metadata" || k.Value == "resources" || k.Value == "status") && v.Kind == yaml.MappingNode && len(v.Content) == 0) {
			continue
		}
		kept = append(kept, k, v)
	}
	n.Content = kept
}
