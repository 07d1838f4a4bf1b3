package functions

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/schemas"
)

// A value of the wrong type is refused for its type, whatever else the
// field's schema says of its values: `nprocPerNode: 4` must be a string,
// not "a number of processes from 1 to 9999". Every scalar of every golden
// case's input is given a value of another type in turn (an integer for a
// string, a string for an integer or a boolean); where the schema refuses
// it, the message for that field must name the type it wants. A field
// that takes the other type too (a quantity, a number or a string) has
// rules of its own for it instead.
func TestTypeErrorsNameTheType(t *testing.T) {
	inputs, err := filepath.Glob("../render/*/testdata/*/*/input.yaml")
	require.NoError(t, err)
	validator := schemas.NewValidator()
	seen := map[string]bool{}
	for _, input := range inputs {
		if strings.Contains(filepath.Base(filepath.Dir(input)), "error") {
			continue
		}
		b, err := os.ReadFile(input)
		require.NoError(t, err)
		docs, err := yaml.Parse(string(b))
		if err != nil {
			continue // a stream of several documents: its parts are cases of their own
		}
		kind, ok := render.Lookup(schemas.Kind{APIVersion: docs.GetApiVersion(), Kind: docs.GetKind()})
		if !ok {
			continue
		}
		if _, problems := validator.Validate(docs, kind.Schema); problems != nil {
			continue
		}
		for _, leaf := range leaves(docs.YNode(), nil) {
			key := docs.GetApiVersion() + "/" + docs.GetKind() + " " + leaf.path
			if seen[key] {
				continue
			}
			seen[key] = true
			wrong, want := flipped(leaf.node)
			if wrong == nil {
				continue
			}
			saved := *leaf.node
			*leaf.node = *wrong
			_, problems := validator.Validate(docs, kind.Schema)
			if want == "must be an integer" {
				// A quantity is a number or a string: "x" is no type
				// error there, and the number written as a string passes.
				*leaf.node = yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: saved.Value, Style: yaml.DoubleQuotedStyle}
				if _, asString := validator.Validate(docs, kind.Schema); !slices.ContainsFunc(asString, func(p schemas.Problem) bool { return p.Field == leaf.path }) {
					problems = nil
				}
			}
			*leaf.node = saved
			for _, p := range problems {
				if p.Field == leaf.path && strings.Contains(p.Message, "Invalid value") && !strings.Contains(p.Message, want) {
					t.Errorf("%s: %s: %s given %s: %s, which does not say it %s", input, docs.GetKind(), leaf.path, wrong.Value, p.Message, want)
				}
			}
		}
	}
	require.NotEmpty(t, seen)
}

type leaf struct {
	path string
	node *yaml.Node
}

// leaves are the scalars of a document, with their field paths as
// problems name them.
func leaves(n *yaml.Node, path []string) []leaf {
	var out []leaf
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			out = append(out, leaves(c, path)...)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if len(path) == 0 && (k == "apiVersion" || k == "kind") {
				continue
			}
			out = append(out, leaves(n.Content[i+1], append(slices.Clip(path), "."+k))...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			out = append(out, leaves(c, append(slices.Clip(path), fmt.Sprintf("[%d]", i)))...)
		}
	case yaml.ScalarNode:
		out = append(out, leaf{strings.TrimPrefix(strings.Join(path, ""), "."), n})
	}
	return out
}

// flipped is a value of another type than n's, and the words a type error
// for n's type says.
func flipped(n *yaml.Node) (*yaml.Node, string) {
	switch n.ShortTag() {
	case yaml.NodeTagString:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: "4"}, "must be a string"
	case yaml.NodeTagInt:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: "x", Style: yaml.DoubleQuotedStyle}, "must be an integer"
	case yaml.NodeTagBool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: "x", Style: yaml.DoubleQuotedStyle}, "must be true or false"
	}
	return nil, ""
}
