package schemas

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Validated is a job spec its schema accepts.
type Validated struct {
	// Doc is the document as written, without null fields (Kubernetes reads
	// `command:` with no value as no command, and so does every later phase)
	// and with YAML aliases replaced by what they stand for.
	Doc *yaml.RNode
	// spec is the document's spec with the schema's defaults filled in.
	// Documents alike but for their names share one: no later phase reads
	// a name from it, only from Doc.
	spec cue.Value
}

// Lookup is the defaulted value at path, which is under the spec
// ("spec.runPolicy"): the rest of the defaulted document is not kept.
func (v *Validated) Lookup(path string) cue.Value {
	rest, ok := strings.CutPrefix(path, "spec")
	if !ok || (rest != "" && rest[0] != '.') {
		// A build bug, not a user's mistake: no caller asks for more.
		panic(fmt.Sprintf("schemas: %q is not under the spec, the only part of a validated document kept", path))
	}
	if rest == "" {
		return v.spec
	}
	return v.spec.LookupPath(cue.ParsePath(rest[1:]))
}

// Decode fills a Go value from the defaulted document at path, which is
// under the spec, the way encoding/json would.
func (v *Validated) Decode(path string, into any) error {
	return v.Lookup(path).Decode(into)
}

// Validate checks a document against a schema, with the Validator shared
// by the package's callers.
func Validate(doc *yaml.RNode, s Schema) (*Validated, Problems) {
	return sharedValidator().Validate(doc, s)
}

// Validate checks a document against its kind's schema. Problems carry
// field paths and positions in doc; doc itself is left unchanged. A
// document of a template the Validator knows has only its own fields
// checked (see templates.go).
func (v *Validator) Validate(doc *yaml.RNode, s Schema) (*Validated, Problems) {
	def, err := v.schema(s)
	if err != nil {
		// The schemas are embedded and tested; failing here is a build bug.
		panic(err)
	}

	tree := treeCopy{copies: map[*yaml.Node]*yaml.Node{}}
	clean := yaml.NewRNode(tree.copy(doc.YNode()))
	dropNulls(clean.YNode())
	key, own, keyed := templateKey{}, ownFields{}, false
	if !tree.aliased {
		key, own, keyed = keyOf(s, clean.YNode())
	}
	if keyed {
		if known, ok := v.templates.lookup(v.ctx, key, own); ok {
			return &Validated{Doc: clean, spec: known.spec}, nil
		}
	}

	var plain any
	if err := clean.YNode().Decode(&plain); err != nil {
		return nil, documentProblems(doc, err)
	}
	// Later phases edit the document, which must not reach through an alias
	// into another part of it. The decoder above has refused documents
	// whose aliases expand beyond reason, so expanding them here is bounded.
	if tree.aliased {
		if err := clean.DeAnchor(); err != nil {
			return nil, documentProblems(doc, err)
		}
	}
	data := v.ctx.Encode(plain)
	if data.Err() != nil {
		return nil, documentProblems(doc, data.Err())
	}
	unified := def.Unify(data)
	if err := unified.Validate(cue.Concrete(true), cue.All()); err != nil {
		return nil, explain(err, def, data, clean)
	}
	spec := unified.LookupPath(cue.ParsePath("spec"))
	if keyed {
		v.templates.accepted(key, spec, func() cue.Value { return def.Unify(v.ctx.Encode(withoutOwnFields(plain, own))) })
	}
	return &Validated{Doc: clean, spec: spec}, nil
}

// treeCopy copies a node deeply. Unlike kyaml's Copy, an alias in the copy
// stands for the copy of its anchor, so expanding aliases in the copy
// leaves the document's own anchors as they are. An anchor comes before its
// aliases in document order, so it has been copied when one is met.
type treeCopy struct {
	copies map[*yaml.Node]*yaml.Node
	// aliased tells whether the tree has anchors, aliases or merge keys:
	// most documents have none, and need no expanding.
	aliased bool
}

func (t *treeCopy) copy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	t.copies[n] = &c
	if n.Anchor != "" || n.Kind == yaml.AliasNode || n.Tag == yaml.MergeTag || (n.Kind == yaml.ScalarNode && n.Value == "<<") {
		t.aliased = true
	}
	if n.Alias != nil {
		if anchor, ok := t.copies[n.Alias]; ok {
			c.Alias = anchor
		} else {
			c.Alias = t.copy(n.Alias)
		}
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = t.copy(child)
	}
	return &c
}

// isNull tells a null scalar, directly or through aliases.
func isNull(n *yaml.Node) bool {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagNull
}

// dropNulls removes mapping entries whose value is null, recursively: a
// null written out, or reached through an alias (affinity: *none where
// the anchor is null), which means the same.
func dropNulls(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			dropNulls(c)
		}
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if isNull(v) {
				continue
			}
			dropNulls(v)
			kept = append(kept, k, v)
		}
		n.Content = kept
	}
}
