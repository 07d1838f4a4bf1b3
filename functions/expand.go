package functions

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/mpijob"
	"github.com/trainfn/trainfn/schemas"
)

// renderers expand each kind that has a schema.
var renderers = map[schemas.Kind]func(*schemas.Validated) (render.Output, field.ErrorList){
	{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"}: mpijob.RenderV2beta1,
}

// jobGroups hold job kinds trainfn may not expand yet; such documents pass
// through with a warning, since an operator in the cluster may expect them.
var jobGroups = map[string]bool{"kubeflow.org": true, "diengine.opendilab.org": true}

// Document is an input document and where it came from.
type Document struct {
	Node   *yaml.RNode
	Source Source
}

// Expand replaces every job spec with the objects it renders and passes every
// other document through untouched, comments included. The output is sorted
// (kustomize's legacy order, then namespace and name), so it is the same
// whatever the order of the input.
//
// When any diagnostic is an error, the output is nil: nothing is half done.
func Expand(docs []Document) ([]*yaml.RNode, Diagnostics) {
	var out []*yaml.RNode
	var diags Diagnostics
	origin := map[*yaml.RNode]Document{}
	for _, doc := range docs {
		nodes, ds := expandOne(doc)
		diags = append(diags, ds...)
		for _, n := range nodes {
			origin[n] = doc
		}
		out = append(out, nodes...)
	}
	diags = append(diags, collisions(out, origin)...)
	sortDiagnostics(diags)
	if diags.HasErrors() {
		return nil, diags
	}
	sortObjects(out)
	return out, diags
}

func expandOne(doc Document) ([]*yaml.RNode, Diagnostics) {
	meta, err := doc.Node.GetMeta()
	if err != nil || meta.APIVersion == "" || meta.Kind == "" {
		return nil, Diagnostics{{Severity: Error, Source: doc.Source, Line: doc.Source.Line,
			Message: "not a Kubernetes object: apiVersion and kind are required"}}
	}
	ref := &yaml.ResourceIdentifier{TypeMeta: meta.TypeMeta, NameMeta: meta.ObjectMeta.NameMeta}
	kind := schemas.Kind{APIVersion: meta.APIVersion, Kind: meta.Kind}
	if !schemas.Known(kind) {
		if group, _ := resid.ParseGroupVersion(meta.APIVersion); jobGroups[group] {
			return []*yaml.RNode{doc.Node}, Diagnostics{{Severity: Warning, Source: doc.Source, Resource: ref,
				Line: doc.Source.Line, Message: fmt.Sprintf("passed through unchanged: trainfn does not expand %s", kind)}}
		}
		return []*yaml.RNode{doc.Node}, nil
	}

	at := func(sev Severity, path, message string) Diagnostic {
		d := Diagnostic{Severity: sev, Source: doc.Source, Resource: ref, Field: path, Message: message}
		line, column := schemas.Position(doc.Node, path)
		d.Line, d.Column = absolute(doc.Source, line, column)
		return d
	}
	valid, problems := schemas.Validate(doc.Node)
	if problems != nil {
		diags := make(Diagnostics, 0, len(problems))
		for _, p := range problems {
			d := at(Error, p.Err.Field, p.Err.ErrorBody())
			d.Line, d.Column = absolute(doc.Source, p.Line, p.Column)
			diags = append(diags, d)
		}
		return nil, diags
	}
	rendered, errs := renderers[kind](valid)
	var diags Diagnostics
	for _, e := range errs {
		diags = append(diags, at(Error, e.Field, e.ErrorBody()))
	}
	for _, w := range rendered.Warnings {
		diags = append(diags, at(Warning, w.Field.String(), w.Message))
	}
	return rendered.Objects, diags
}

// absolute turns a line in a document into a line in its file; 0, 0 when
// the document's place in its file is unknown (a KRM function's items come
// from a ResourceList, whose lines are not the file's).
func absolute(src Source, line, column int) (int, int) {
	if line == 0 || src.Line == 0 {
		return 0, 0
	}
	return line + src.Line - 1, column
}

// collisions reports output objects with the same identity: applying both
// would leave one of them silently overwritten.
func collisions(objects []*yaml.RNode, origin map[*yaml.RNode]Document) Diagnostics {
	var diags Diagnostics
	first := map[resid.ResId]*yaml.RNode{}
	for _, o := range objects {
		id := resid.FromRNode(o)
		prev, dup := first[id]
		if !dup {
			first[id] = o
			continue
		}
		a, b := origin[prev], origin[o]
		diags = append(diags, Diagnostic{Severity: Error, Source: b.Source, Line: b.Source.Line,
			Resource: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: o.GetApiVersion(), Kind: o.GetKind()},
				NameMeta: yaml.NameMeta{Name: o.GetName(), Namespace: o.GetNamespace()}},
			Message: fmt.Sprintf("this object is output twice: by %s and by %s", describe(a), describe(b))})
	}
	return diags
}

func describe(d Document) string {
	s := d.Node.GetKind() + " " + d.Node.GetName()
	if d.Source.Path != "" {
		s += fmt.Sprintf(" (%s, document %d)", d.Source.Path, d.Source.Index+1)
	}
	return s
}

// sortObjects orders objects as kustomize's legacy order does: namespaces,
// then what others depend on (RBAC, ConfigMaps, Services), then workloads;
// within a kind by namespace and name.
func sortObjects(objects []*yaml.RNode) {
	ids := make(map[*yaml.RNode]resid.ResId, len(objects))
	for _, o := range objects {
		ids[o] = resid.FromRNode(o)
	}
	sort.SliceStable(objects, func(i, j int) bool {
		a, b := ids[objects[i]], ids[objects[j]]
		if !a.Gvk.Equals(b.Gvk) {
			return a.Gvk.IsLessThan(b.Gvk)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

func sortDiagnostics(ds Diagnostics) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Source.Path != b.Source.Path {
			return a.Source.Path < b.Source.Path
		}
		if a.Source.Index != b.Source.Index {
			return a.Source.Index < b.Source.Index
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return strings.Compare(a.String(), b.String()) < 0
	})
}
