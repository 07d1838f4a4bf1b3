package ynode

import "sigs.k8s.io/kustomize/kyaml/yaml"

// The fields of a mapping node, read and written in place, for code that
// walks nodes rather than piping an RNode through kyaml's filters. Each
// does one thing, as kyaml's filters do: Get reads a field as written,
// Given reads the value it stands for, ScalarValue a scalar's, Set writes
// one, EnsureMap and EnsureSeq find or make a nested one. SetString is the
// one filter, for kyaml's pipes.

// Get is the value of mapping m's field name as written (an alias stays an
// alias); nil when m is no mapping or has no such field.
func Get(m *yaml.Node, name string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i+1]
		}
	}
	return nil
}

// Given is the value mapping m's field name stands for, aliases followed;
// nil when the field is missing, null or empty, as kyaml's getters read it.
func Given(m *yaml.Node, name string) *yaml.Node {
	v := Get(m, name)
	for v != nil && v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if yaml.IsYNodeNilOrEmpty(v) {
		return nil
	}
	return v
}

// ScalarValue is the value of a scalar node, or of the scalar an alias
// stands for; "" for anything else.
func ScalarValue(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// Set gives mapping m's field name the value, in place of the one it had,
// or as a new last field.
func Set(m *yaml.Node, name string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, String(name), value)
}

// EnsureMap is mapping m's field name when it is a mapping; otherwise the
// field is set to a new, empty one, which is returned.
func EnsureMap(m *yaml.Node, name string) *yaml.Node {
	return ensure(m, name, yaml.MappingNode)
}

// EnsureSeq is EnsureMap for a sequence.
func EnsureSeq(m *yaml.Node, name string) *yaml.Node {
	return ensure(m, name, yaml.SequenceNode)
}

func ensure(m *yaml.Node, name string, kind yaml.Kind) *yaml.Node {
	if v := Get(m, name); v != nil && v.Kind == kind {
		return v
	}
	v := &yaml.Node{Kind: kind}
	Set(m, name, v)
	return v
}

// SetString is a kyaml filter that sets a field of the mapping it is given
// to a string, quoted where a YAML 1.1 reader would take it for another
// type, as String quotes it.
func SetString(name, value string) yaml.FieldSetter {
	return yaml.SetField(name, yaml.NewRNode(String(value)))
}
