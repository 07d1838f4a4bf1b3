// Package ynode builds YAML nodes whose fields keep the order they are
// written in, so that rendered objects read like hand-written manifests and
// come out byte-identical on every run.
package ynode

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Map builds a mapping from key, value pairs. A nil pointer value leaves its
// key out, so optional fields can be passed as they are.
func Map(pairs ...any) *yaml.Node {
	if len(pairs)%2 != 0 {
		panic("ynode.Map needs key, value pairs")
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < len(pairs); i += 2 {
		key, ok := pairs[i].(string)
		if !ok {
			panic(fmt.Sprintf("ynode.Map key %v is not a string", pairs[i]))
		}
		if v := Of(pairs[i+1]); v != nil {
			m.Content = append(m.Content, String(key), v)
		}
	}
	return m
}

// StringMap builds a mapping of strings in key order.
func StringMap(m map[string]string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n.Content = append(n.Content, String(k), String(m[k]))
	}
	return n
}

// Seq builds a sequence of the given values.
func Seq(values ...any) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode}
	for _, v := range values {
		if n := Of(v); n != nil {
			s.Content = append(s.Content, n)
		}
	}
	return s
}

// Of converts a Go value to a node; nil for a nil pointer.
func Of(v any) *yaml.Node {
	switch t := v.(type) {
	case nil:
		return nil
	case *yaml.Node:
		return t
	case string:
		return String(t)
	case *string:
		if t == nil {
			return nil
		}
		return String(*t)
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(t)}
	case *bool:
		if t == nil {
			return nil
		}
		return Of(*t)
	case int:
		return Int(int64(t))
	case int32:
		return Int(int64(t))
	case int64:
		return Int(t)
	case *int32:
		if t == nil {
			return nil
		}
		return Int(int64(*t))
	case *int64:
		if t == nil {
			return nil
		}
		return Int(*t)
	case []string:
		s := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range t {
			s.Content = append(s.Content, String(e))
		}
		return s
	}
	panic(fmt.Sprintf("ynode: cannot build a node from %T", v))
}

// String is a string scalar. The encoder quotes what YAML 1.2 would read as
// another type; strings YAML 1.1 reads so ("on", "y", "no", "2:4") are
// quoted here, since kubectl, PyYAML and other tools read YAML 1.1. The
// render's QuoteForYAML11 quotes them again in its output, with the nodes
// it copied from the job, but a node built here is right wherever it goes.
func String(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
	if readsAsNonStringInYAML11(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// QuoteForYAML11 double-quotes every plain string scalar under n that a
// YAML 1.1 reader would take for another type, as String does: a pod
// template's values keep the style they were written in, and a plain
// `value: 2:4`, a string in YAML 1.2, is the integer 124 to PyYAML.
// A plain date (2024-01-01) and a plain << are strings to the render too
// (yaml.v3 reads a timestamp into a string, and merge keys are expanded
// before), so they are quoted, and tagged as the strings they are.
func QuoteForYAML11(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		switch n.ShortTag() {
		case yaml.NodeTagString:
			if readsAsNonStringInYAML11(n.Value) {
				n.Style = yaml.DoubleQuotedStyle
			}
		case "!!timestamp", yaml.MergeTag:
			n.Tag, n.Style = yaml.NodeTagString, yaml.DoubleQuotedStyle
		}
	}
	for _, c := range n.Content {
		QuoteForYAML11(c)
	}
}

// sexagesimal are YAML 1.1's base-60 integers and floats ("1:30",
// "2:4", "190:20:30.15"), which kyaml's YAML 1.1 parser (go-yaml v2) does
// not implement and other YAML 1.1 readers, PyYAML among them, do.
var sexagesimal = regexp.MustCompile(`^[-+]?([1-9][0-9_]*(:[0-5]?[0-9])+|[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*)$`)

// readsAsNonStringInYAML11 tells whether a YAML 1.1 reader takes the
// plain scalar s for something other than a string: kyaml's test, base-60
// numbers, and "=", YAML 1.1's value key, which PyYAML refuses.
func readsAsNonStringInYAML11(s string) bool {
	return s == "=" || decimal(s) || mayReadAsNonString(s) && (yaml.IsValueNonString(s) || sexagesimal.MatchString(s))
}

// decimal tells a run of decimal digits, an integer to every YAML reader
// (an index, a count), without parsing it.
func decimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// mayReadAsNonString is a cheap first look before kyaml's exact test, which
// parses the value, and which a render would otherwise run on every digest,
// port and count it writes: YAML 1.1 reads a plain scalar as something other
// than a string only if it is written as a number is (see mayBeNumber), is
// "~", or is one of its boolean and null words.
func mayReadAsNonString(s string) bool {
	if s == "" {
		return false
	}
	if c := s[0]; c >= '0' && c <= '9' || strings.ContainsRune("+-.", rune(c)) {
		return mayBeNumber(s)
	}
	switch strings.ToLower(s) {
	case "~", "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return true
	}
	return false
}

// mayBeNumber tells whether s is written with the characters a YAML 1.1
// number is: after a sign, hexadecimal digits behind 0x, binary ones behind
// 0b, .inf and .nan, or else decimal digits, '_', '.', ':' (base 60) and an
// exponent. A hexadecimal digest without 0x is none.
func mayBeNumber(s string) bool {
	s = strings.TrimLeft(s, "+-")
	switch {
	case strings.HasPrefix(s, "0x"):
		return strings.Trim(s[2:], "0123456789abcdefABCDEF_") == ""
	case strings.HasPrefix(s, "0b"):
		return strings.Trim(s[2:], "01_") == ""
	}
	switch strings.ToLower(s) {
	case ".inf", ".nan":
		return true
	}
	return s != "" && strings.Trim(s, "0123456789_.:eE+-") == ""
}

// Int is an integer scalar.
func Int(i int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.FormatInt(i, 10)}
}

// FileMode is a file mode as Kubernetes reads it (a decimal integer), with
// the octal form as a comment for people.
func FileMode(mode int32) *yaml.Node {
	n := Int(int64(mode))
	n.LineComment = fmt.Sprintf("0%o", mode)
	return n
}

// Text is a multi-line string written as a literal block.
func Text(s string) *yaml.Node {
	n := String(s)
	n.Style = yaml.LiteralStyle
	return n
}
