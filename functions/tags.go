package functions

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// Explicit YAML tags are where trainfn and the cluster could read one
// document two ways. kyaml, which trainfn, kustomize and kpt read with,
// keeps a scalar's text and its tag; kubectl and the API server read YAML
// with sigs.k8s.io/yaml, which converts the value: `name: !!binary cGk=`
// is "cGk=" to the first and "pi" to the second. Rather than guess each
// conversion, trainfn refuses every tag that changes what a value is, in
// the documents it reads (job specs, their runtimes, its configuration),
// and in the identity of every other document (apiVersion, kind, name,
// namespace), which it sorts by and checks for collisions. A tag that
// says what the value already is (`!!int 3`, `!!map`) changes nothing,
// and `!!str` makes the text a string for every reader alike.

// tags reports every tag in n that changes what a value is.
func (c *checker) tags(n *yaml.Node) {
	c.tag(n)
	step := func(s segment, child *yaml.Node) {
		c.path = append(c.path, s)
		c.tags(child)
		c.path = c.path[:len(c.path)-1]
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.path = append(c.path, segment{key: n.Content[i].Value, index: -1})
			c.tag(n.Content[i])
			c.path = c.path[:len(c.path)-1]
			step(segment{key: n.Content[i].Value, index: -1}, n.Content[i+1])
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			step(segment{index: i}, e)
		}
	}
}

// identityTags reports tags on the fields that name a document.
func (c *checker) identityTags(n *yaml.Node) {
	check := func(path []segment, keyed, value *yaml.Node) {
		if value == nil {
			return
		}
		c.path = path
		c.tag(keyed)
		c.tag(value)
		c.path = nil
	}
	for _, field := range []string{"apiVersion", "kind"} {
		check([]segment{{key: field, index: -1}}, keyNode(n, field), ynode.Get(n, field))
	}
	meta := ynode.Get(n, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return
	}
	check([]segment{{key: "metadata", index: -1}}, keyNode(n, "metadata"), meta)
	for _, field := range []string{"name", "namespace"} {
		check([]segment{{key: "metadata", index: -1}, {key: field, index: -1}}, keyNode(meta, field), ynode.Get(meta, field))
	}
}

// keyNode is the key of a mapping's field.
func keyNode(m *yaml.Node, field string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == field {
			return m.Content[i]
		}
	}
	return nil
}

// tag reports n's tag when it changes what n is.
func (c *checker) tag(n *yaml.Node) {
	if problem := tagProblem(n); problem != "" {
		c.report(n, c.fieldPath(), problem)
	}
}

// tagProblem says why n's explicit tag is refused; "" when it has none,
// or one that changes nothing.
func tagProblem(n *yaml.Node) string {
	if n == nil || n.Style&yaml.TaggedStyle == 0 {
		return ""
	}
	tag := n.ShortTag()
	switch n.Kind {
	case yaml.ScalarNode:
		untagged := yaml.Node{Kind: yaml.ScalarNode, Value: n.Value, Style: n.Style &^ yaml.TaggedStyle}
		if tag == yaml.NodeTagString || tag == untagged.ShortTag() {
			return ""
		}
		if tag == "!!binary" {
			return binaryProblem(n.Value)
		}
		if strings.HasPrefix(tag, "!!") {
			return fmt.Sprintf("the YAML tag %s makes %s out of a value that is %s without it: kustomize, kpt and trainfn keep the text as written, kubectl and the API server convert it, so the render and the cluster could read it differently; write the value without the tag",
				tag, tagName(tag), tagName(untagged.ShortTag()))
		}
	case yaml.MappingNode:
		if tag == yaml.NodeTagMap {
			return ""
		}
	case yaml.SequenceNode:
		if tag == yaml.NodeTagSeq {
			return ""
		}
	}
	return fmt.Sprintf("the YAML tag %s is no type of the Kubernetes API: kustomize, kpt and trainfn keep it as written, and what kubectl and the API server make of the value need not be what trainfn renders; write the value without the tag", tag)
}

// binaryProblem refuses a !!binary value, saying what each side reads.
func binaryProblem(text string) string {
	decoded, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(text), ""))
	cluster := "the bytes it encodes"
	if err == nil && utf8.Valid(decoded) && strings.IndexFunc(string(decoded), func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		cluster = fmt.Sprintf("%q", decoded)
	} else if err != nil {
		cluster = "an error (it is no base64)"
	}
	return fmt.Sprintf("the YAML tag !!binary makes the value base64: kubectl and the API server read %s, kustomize, kpt and trainfn its text %q, so the render and the cluster would disagree; write the value itself, without the tag",
		cluster, text)
}

// tagName names a core tag's type.
func tagName(tag string) string {
	switch tag {
	case yaml.NodeTagString:
		return "a string"
	case yaml.NodeTagInt:
		return "an integer"
	case yaml.NodeTagFloat:
		return "a number"
	case yaml.NodeTagBool:
		return "a boolean"
	case yaml.NodeTagNull:
		return "null"
	case "!!timestamp":
		return "a timestamp"
	}
	return tag
}
