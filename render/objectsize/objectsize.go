// Package objectsize measures objects as the API server stores them, and
// finds what in a document makes it large.
package objectsize

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Max is the most one object may take as JSON: the API server
// keeps every object in etcd with one request, and etcd refuses requests
// over its --max-request-bytes, 1.5 MiB by default.
const Max = 3 << 19

// JSON is about how many bytes n takes as compact JSON, YAML aliases
// expanded. It stops counting past limit, returning limit+1: aliases can
// stand for more than memory holds, and past the limit the exact size does
// not matter.
func JSON(n *yaml.Node, limit int) int {
	s := sizer{limit: limit}
	s.add(n)
	return min(s.size, limit+1)
}

type sizer struct{ size, limit int }

func (s *sizer) add(n *yaml.Node) {
	if n == nil || s.size > s.limit {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			s.add(c)
		}
	case yaml.AliasNode:
		s.add(n.Alias)
	case yaml.MappingNode:
		// Braces, a comma between entries and a colon in each.
		s.size += 2 + max(0, len(n.Content)/2-1) + len(n.Content)/2
		for i, c := range n.Content {
			if i%2 == 0 && c.Kind == yaml.ScalarNode {
				s.size += quotedSize(c.Value)
				continue
			}
			s.add(c)
		}
	case yaml.SequenceNode:
		s.size += 2 + max(0, len(n.Content)-1)
		for _, c := range n.Content {
			s.add(c)
		}
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case yaml.NodeTagInt, yaml.NodeTagFloat, yaml.NodeTagBool, yaml.NodeTagNull:
			s.size += len(n.Value)
		default:
			s.size += quotedSize(n.Value)
		}
	}
}

// quotedSize is the length of s as a JSON string.
func quotedSize(s string) int {
	size := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r':
			size++
		case c < 0x20:
			size += 5
		}
	}
	return size
}

// Bulk is where most of a document's bytes are: starting from the whole
// of it, the field that holds more than half of them, as long as one does.
// It is the field to make smaller when the document, or what it renders,
// is too large; nil when no field holds most of it.
func Bulk(doc *yaml.Node, limit int) (*field.Path, *yaml.Node) {
	var path *field.Path
	n := doc
	for {
		for n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = n.Content[0]
		}
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		total := JSON(n, limit)
		var next *yaml.Node
		var nextPath *field.Path
		most := 0
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if size := JSON(n.Content[i+1], limit); size > most {
					most, next, nextPath = size, n.Content[i+1], path.Child(n.Content[i].Value)
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if size := JSON(c, limit); size > most {
					most, next, nextPath = size, c, path.Index(i)
				}
			}
		}
		if next == nil || 2*most <= total {
			return path, n
		}
		path, n = nextPath, next
	}
}

// Entries says how many entries a mapping or sequence holds, for a message
// about its size; "" for anything else.
func Entries(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return fmt.Sprintf(" (%d entries)", len(n.Content)/2)
	case yaml.SequenceNode:
		return fmt.Sprintf(" (%d entries)", len(n.Content))
	}
	return ""
}
