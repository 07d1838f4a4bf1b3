package functions

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/objectsize"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
	"github.com/trainfn/trainfn/render/ynode"
)

// maxSpecDepth bounds how deep a job spec nests. Its deepest fields, in pod
// templates, are about 20 levels down; only free-form ones such as status
// go further, and nothing real nests a hundred levels, while validating a
// document costs time in proportion to its size times its depth.
const maxSpecDepth = 100

// wellFormed reports what makes a document unfit to be read further, beyond
// its YAML syntax and its shape as an object (which configure checks):
//
//   - in a document trainfn passes through, a key given twice: YAML keeps
//     one of them silently, and which depends on the tool (kubectl refuses
//     the document, kyaml keeps the first, so an object could even change
//     its name on the way). A job spec's schema reports its own, with its
//     other problems;
//   - metadata, labels or annotations given as YAML aliases;
//   - a job spec (or a runtime, or trainfn's config) nested deeper than
//     maxSpecDepth, or larger than the API server stores in one object: its
//     operator could not have run it, and validating it would take time
//     out of proportion;
//   - an explicit YAML tag that changes what a value is, in such a
//     document, or in the identity of any other (see tags.go).
func wellFormed(doc Document) Diagnostics {
	n := doc.Node.YNode()
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	c := checker{doc: doc, resource: resourceOf(n)}
	c.metadataAliases(n)
	if interpreted(doc.Node) {
		if !c.depth(n, 0) {
			c.size(n)
			c.tags(n)
		}
	} else {
		c.identityTags(n)
		c.duplicateKeys(n)
	}
	return c.diags
}

// interpreted tells the documents trainfn reads beyond their identity:
// job specs, Kubeflow Trainer's runtimes their TrainJobs refer to, and
// trainfn's own configuration.
func interpreted(n *yaml.RNode) bool {
	return isJobSpec(n) || isConfig(n) || runtimes.IsRuntime(n.GetApiVersion(), n.GetKind())
}

// checker collects the problems of one document.
type checker struct {
	doc      Document
	resource *yaml.ResourceIdentifier
	path     []segment
	diags    Diagnostics
}

// segment is a step of a field path, kept as it is walked and spelled out
// only for a message, since most documents have nothing to report.
type segment struct {
	key   string
	index int
}

func (c *checker) fieldPath() string {
	var b strings.Builder
	for i, s := range c.path {
		switch {
		case s.key == "" && s.index >= 0:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		default:
			if i > 0 {
				b.WriteString(".")
			}
			b.WriteString(s.key)
		}
	}
	return b.String()
}

func (c *checker) report(at *yaml.Node, field, message string) {
	d := Diagnostic{Severity: Error, Source: c.doc.Source, Resource: c.resource, Field: field,
		Message: fileLines(message, c.doc.Source)}
	d.Line, d.Column = absolute(c.doc.Source, at.Line, at.Column)
	if d.Line == 0 {
		d.Line = c.doc.Source.Line
	}
	c.diags = append(c.diags, d)
}

// metadataAliases reports metadata, labels or annotations given as a YAML
// alias: kyaml edits them in place (the reader's and writer's annotations,
// the rendered objects' labels), and an alias is no mapping to edit.
func (c *checker) metadataAliases(n *yaml.Node) {
	meta := ynode.Get(n, "metadata")
	fields := []string{"metadata"}
	values := []*yaml.Node{meta}
	if meta != nil && meta.Kind == yaml.MappingNode {
		fields = append(fields, "metadata.labels", "metadata.annotations")
		values = append(values, ynode.Get(meta, "labels"), ynode.Get(meta, "annotations"))
	}
	for i, v := range values {
		if v != nil && v.Kind == yaml.AliasNode {
			c.report(v, fields[i], fmt.Sprintf("a YAML alias (*%s): tools edit an object's metadata in place, kustomize, kpt and trainfn among them, and cannot edit an alias; write it out", v.Value))
		}
	}
}

// duplicateKeys reports every key given twice in a mapping, at its second
// place. Aliases are not followed: what they stand for is checked where it
// is written.
func (c *checker) duplicateKeys(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		seen := keysOf(n)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			c.path = append(c.path, segment{key: k.Value, index: -1})
			if first := seen(i); first != nil {
				c.report(k, c.fieldPath(), fmt.Sprintf("mapping key %q already defined at line %d: YAML keeps only one of them, and which one depends on the tool that reads it", k.Value, first.Line))
			}
			c.duplicateKeys(n.Content[i+1])
			c.path = c.path[:len(c.path)-1]
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			c.path = append(c.path, segment{index: i})
			c.duplicateKeys(e)
			c.path = c.path[:len(c.path)-1]
		}
	}
}

// keysOf answers, for the key at content index i of a mapping, the earlier
// key equal to it, if any. Small mappings, the most common, are searched;
// larger ones indexed, so that a mapping of any size costs time in
// proportion to it.
func keysOf(m *yaml.Node) func(i int) *yaml.Node {
	type key struct{ tag, value string }
	scalar := func(k *yaml.Node) (key, bool) {
		return key{k.ShortTag(), k.Value}, k.Kind == yaml.ScalarNode
	}
	if len(m.Content) <= 32 {
		return func(i int) *yaml.Node {
			k, ok := scalar(m.Content[i])
			for j := 0; ok && j < i; j += 2 {
				if e, ok := scalar(m.Content[j]); ok && e == k {
					return m.Content[j]
				}
			}
			return nil
		}
	}
	first := make(map[key]*yaml.Node, len(m.Content)/2)
	for i := 0; i < len(m.Content); i += 2 {
		if k, ok := scalar(m.Content[i]); ok {
			if _, seen := first[k]; !seen {
				first[k] = m.Content[i]
			}
		}
	}
	return func(i int) *yaml.Node {
		k, ok := scalar(m.Content[i])
		if e := first[k]; ok && e != m.Content[i] {
			return e
		}
		return nil
	}
}

// depth reports the first node nested deeper than maxSpecDepth; it says
// whether there was one.
func (c *checker) depth(n *yaml.Node, level int) bool {
	if level > maxSpecDepth {
		// The first steps say where; a hundred more would say nothing.
		c.path = c.path[:8]
		c.report(n, c.fieldPath()+"...", fmt.Sprintf("nested more than %d levels deep, deeper than any field of its schema", maxSpecDepth))
		return true
	}
	step := func(s segment, child *yaml.Node) bool {
		c.path = append(c.path, s)
		deep := c.depth(child, level+1)
		if !deep {
			c.path = c.path[:len(c.path)-1]
		}
		return deep
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if step(segment{key: n.Content[i].Value, index: -1}, n.Content[i+1]) {
				return true
			}
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			if step(segment{index: i}, e) {
				return true
			}
		}
	}
	return false
}

// size refuses a job spec larger than the API server stores in one object,
// naming the field that holds most of it.
func (c *checker) size(n *yaml.Node) {
	// Aliases are counted as what they stand for, so the count is bounded.
	if objectsize.JSON(n, objectsize.Max) <= objectsize.Max {
		return
	}
	path, bulk := objectsize.Bulk(n, objectsize.Max)
	field, where := "", "no one field holds most of it"
	if path != nil {
		field, where = path.String(), "most of it is here"+objectsize.Entries(bulk)
	}
	c.report(bulk, field, fmt.Sprintf(
		"the %s takes more than %d bytes as JSON (YAML aliases expanded), the most the API server stores in one object (etcd's default request limit), so its operator could not have stored it either: %s; make it smaller",
		c.doc.Node.GetKind(), objectsize.Max, where))
}

// given reports whether a field has a value: null says nothing.
func given(n *yaml.Node) bool {
	return n != nil && !(n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagNull)
}

// kindName says what a node is, for a message that expected another.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.AliasNode:
		return "a YAML alias (*" + n.Value + ")"
	case yaml.ScalarNode:
		return "a scalar"
	}
	return "a mapping"
}

// resourceOf names a document in messages: its kind and name, as far as
// they are written as strings, through a YAML alias by the value it stands
// for (kyaml's GetMeta gives the alias's own name). Unlike GetMeta it
// reads nothing else, so any shape of metadata will do.
func resourceOf(n *yaml.Node) *yaml.ResourceIdentifier {
	id := &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{
		APIVersion: ynode.ScalarValue(ynode.Get(n, "apiVersion")), Kind: ynode.ScalarValue(ynode.Get(n, "kind"))}}
	if meta := ynode.Get(n, "metadata"); meta != nil && meta.Kind == yaml.MappingNode {
		id.Name, id.Namespace = ynode.ScalarValue(ynode.Get(meta, "name")), ynode.ScalarValue(ynode.Get(meta, "namespace"))
	}
	if id.Kind == "" {
		return nil
	}
	return id
}
