package functions

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// stdinName names standard input in messages about its text.
const stdinName = "<stdin>"

// listInput is the ResourceList (or v1 List) a KRM function reads on
// standard input, taken apart as kyaml's framework takes it apart, to be
// checked before the framework reads it.
type listInput struct {
	apiVersion, kind string
	items            []*yaml.RNode
	functionConfig   *yaml.RNode
}

// problems are what keeps the items, or the function config, from being
// processed at all.
func (in *listInput) problems() Diagnostics {
	var diags Diagnostics
	for i, item := range in.items {
		switch n := item.YNode(); {
		case n.Kind == yaml.AliasNode:
			diags = append(diags, Diagnostic{Severity: Error, Field: fmt.Sprintf("items[%d]", i),
				Message: fmt.Sprintf("a YAML alias (*%s) of another item: each object is written out once", n.Value)})
		case shapeProblem(item) != "":
			diags = append(diags, Diagnostic{Severity: Error, Field: fmt.Sprintf("items[%d]", i), Message: shapeProblem(item)})
		default:
			diags = append(diags, wellFormed(Document{Node: item, Source: annotatedSource(item)})...)
		}
	}
	if fc := in.functionConfig; fc != nil && shapeProblem(fc) == "" {
		diags = append(diags, wellFormed(Document{Node: fc, Source: annotatedSource(fc)})...)
	}
	return diags
}

// writeAsItCame writes the ResourceList back with its items untouched and
// the results of diags. kyaml's writer reads every item's annotations,
// which it cannot do for items that are no objects, so the list is
// written here.
func (in *listInput) writeAsItCame(w io.Writer, diags Diagnostics) error {
	results, err := resultsNode(results(diags))
	if err != nil {
		return err
	}
	items := make([]*yaml.Node, len(in.items))
	for i, item := range in.items {
		items[i] = item.YNode()
	}
	var config *yaml.Node
	if in.functionConfig != nil {
		config = in.functionConfig.YNode()
	}
	return writeList(w, in.apiVersion, in.kind, items, config, results.YNode())
}

// resultsNode is results as the framework writes them.
func resultsNode(results framework.Results) (*yaml.RNode, error) {
	b, err := yaml.Marshal(results)
	if err != nil {
		return nil, err
	}
	return yaml.Parse(string(b))
}

// readResourceList reads standard input as kyaml's framework does when it
// is one ResourceList (or v1 List) document, and refuses what the
// framework would read wrongly: a field of the list given twice (the
// framework keeps the first, dropping the items of the second) and items
// that are no sequence (an alias of one is read as no items at all). It
// returns nil, nil for anything else, a plain stream of objects say, which
// the framework reads as items.
func readResourceList(data []byte) (*listInput, error) {
	if d := checkText(stdinName, data); d != nil {
		return nil, Diagnostics{*d}
	}
	if bytes.Contains(data, []byte("\r\n")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := decoder.Decode(&doc); err != nil {
		return nil, nil
	}
	root := yaml.NewRNode(&doc).YNode()
	kind := ynode.ScalarValue(ynode.Get(root, "kind"))
	if root.Kind != yaml.MappingNode || (kind != kio.ResourceListKind && kind != "List") ||
		(ynode.Get(root, "items") == nil && ynode.Get(root, "functionConfig") == nil) {
		return nil, nil
	}
	var next yaml.Node
	if err := decoder.Decode(&next); !errors.Is(err, io.EOF) {
		// Another document follows: the framework reads the list as one
		// item among others.
		return nil, nil
	}

	var diags Diagnostics
	seen := keysOf(root)
	for i := 0; i < len(root.Content); i += 2 {
		if first := seen(i); first != nil {
			k := root.Content[i]
			diags = append(diags, Diagnostic{Severity: Error, Source: Source{Path: stdinName}, Line: k.Line, Column: k.Column,
				Message: fmt.Sprintf("the %s gives %s twice (first at line %d): which one holds what it lists is ambiguous", kind, k.Value, first.Line)})
		}
	}
	in := &listInput{apiVersion: ynode.ScalarValue(ynode.Get(root, "apiVersion")), kind: kind}
	if items := ynode.Get(root, "items"); given(items) {
		if items.Kind != yaml.SequenceNode {
			diags = append(diags, Diagnostic{Severity: Error, Source: Source{Path: stdinName}, Line: items.Line, Column: items.Column,
				Message: fmt.Sprintf("the items of the %s must be a sequence of objects, not %s", kind, kindName(items))})
		} else {
			for _, item := range items.Content {
				in.items = append(in.items, yaml.NewRNode(item))
			}
		}
	}
	if len(diags) > 0 {
		return nil, diags
	}
	if fc := ynode.Get(root, "functionConfig"); fc != nil {
		in.functionConfig = yaml.NewRNode(fc)
	}
	return in, nil
}

// readPlainStream checks a plain stream of objects given to the function
// instead of a ResourceList as trainfn render would read it, so that
// kyaml's framework, which reads such a stream as items, meets no document
// it cannot read.
func readPlainStream(data []byte) error {
	docs, diags := parseDocuments(stdinName, data)
	for _, d := range docs {
		if problem := shapeProblem(d.Node); problem != "" {
			diags = append(diags, Diagnostic{Severity: Error, Source: d.Source, Line: startLine(d), Message: problem})
		}
	}
	if len(diags) > 0 {
		return diags
	}
	return nil
}
