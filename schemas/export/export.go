// Package export writes the CUE schemas of package schemas in the schema
// languages other tools read: JSON Schema draft 2020-12 (editors through
// yaml-language-server, kubeconform, Helm's values.schema.json) and
// OpenAPI 3.0 (a document of every kind, a KRM function definition). The
// CUE schemas stay the single source of truth: nothing here restates a
// field or a rule, it is all converted.
//
// JSON Schema cannot say everything CUE says. What depends on other fields
// (a job name's length limit on its worker count, maxReplicas at least
// minReplicas, exactly one of template and tasks, a container named
// pytorch) is left out, so an exported schema never refuses a document
// trainfn accepts; trainfn validate checks the rest.
package export

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/trainfn/trainfn/schemas"
)

// JSONSchemaDraft is the JSON Schema dialect of the exported schemas.
const JSONSchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// Set is the schemas of some kinds and the definitions they share.
type Set struct {
	kinds []schemas.Kind
	roots map[schemas.Kind]*Schema
	defs  map[string]*Schema
}

// Build converts the schemas of the kinds given, or of every kind of the
// catalog.
func (cat Catalog) Build(kinds ...schemas.Kind) (*Set, error) {
	if len(kinds) == 0 {
		kinds = cat.kinds()
	}
	kinds = slices.Clone(kinds)
	SortKinds(kinds)
	kinds = slices.Compact(kinds)
	c := newConverter()
	set := &Set{kinds: kinds, roots: map[schemas.Kind]*Schema{}}
	for _, k := range kinds {
		at, err := cat.schemaOf(k)
		if err != nil {
			return nil, err
		}
		def, err := schemas.Definition(at)
		if err != nil {
			return nil, err
		}
		root := c.object(def, closed)
		if c.err != nil {
			return nil, fmt.Errorf("exporting %s: %w", k, c.err)
		}
		group, version := resid.ParseGroupVersion(k.APIVersion)
		root.Title = k.Kind + " " + k.APIVersion
		root.Description = docText(def)
		if root.Description == "" {
			root.Description = packageDoc(def)
		}
		root.GroupVersionKinds = []GroupVersionKind{{Group: group, Version: version, Kind: k.Kind}}
		set.roots[k] = root
	}
	set.defs = c.defs
	return set, nil
}

// Kinds are the set's kinds, in order of group, version and kind.
func (s *Set) Kinds() []schemas.Kind { return slices.Clone(s.kinds) }

// Root is a copy of the schema of a kind's documents, whose refs name
// definitions of the set.
func (s *Set) Root(k schemas.Kind) (*Schema, error) {
	root, ok := s.roots[k]
	if !ok {
		return nil, fmt.Errorf("no schema for %s was exported", k)
	}
	return root.Copy(), nil
}

// JSONSchema is a kind's JSON Schema: one standalone document holding the
// definitions it refers to.
func (s *Set) JSONSchema(k schemas.Kind) ([]byte, error) {
	root, err := s.Root(k)
	if err != nil {
		return nil, err
	}
	return s.Document(root)
}

// Document writes a root schema as a standalone JSON Schema document, with
// the set's definitions it refers to under $defs. Tools build schemas of
// their own this way (a Helm chart's values, say).
func (s *Set) Document(root *Schema) ([]byte, error) {
	names, err := s.reachable(root)
	if err != nil {
		return nil, err
	}
	doc := object{{"$schema", JSONSchemaDraft}}
	body, _ := root.render(jsonSchema).(object)
	doc = append(doc, body...)
	if len(names) > 0 {
		defs := object{}
		for _, n := range names {
			defs.set(n, s.defs[n].render(jsonSchema))
		}
		doc.set("$defs", defs)
	}
	return marshal(doc)
}

// OpenAPI is one OpenAPI 3.0 document whose components.schemas hold every
// kind of the set, named like Kubernetes' own (org.kubeflow.v2beta1.MPIJob),
// and the definitions they share. It describes no paths: there is no API
// server, only documents.
func (s *Set) OpenAPI(version string) ([]byte, error) {
	components := map[string]*Schema{}
	for _, k := range s.kinds {
		components[SchemaName(k)] = s.roots[k]
	}
	for _, root := range s.roots {
		names, err := s.reachable(root)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			components[n] = s.defs[n]
		}
	}
	schemasObj := object{}
	for _, n := range slices.Sorted(maps.Keys(components)) {
		schemasObj.set(n, components[n].render(openAPI))
	}
	doc := object{
		{"openapi", "3.0.3"},
		{"info", object{
			{"title", "trainfn job specs"},
			{"description", "The documents trainfn reads, converted from its CUE schemas. Rules that depend on other fields are checked by trainfn validate alone."},
			{"version", version},
		}},
		{"paths", object{}},
		{"components", object{{"schemas", schemasObj}}},
	}
	return marshal(doc)
}

// Inline is root with every ref replaced by the definition it names, for
// tools that resolve no refs (a CRD's or a KRM function definition's
// openAPIV3Schema).
func (s *Set) Inline(root *Schema) (*Schema, error) {
	return s.inline(root.Copy(), nil)
}

func (s *Set) inline(x *Schema, path []string) (*Schema, error) {
	if x == nil {
		return nil, nil
	}
	if x.Ref != "" {
		if slices.Contains(path, x.Ref) {
			return nil, fmt.Errorf("%s refers to itself: it cannot be inlined", x.Ref)
		}
		def, ok := s.defs[x.Ref]
		if !ok {
			return nil, fmt.Errorf("no definition %s", x.Ref)
		}
		body, err := s.inline(def.Copy(), append(path, x.Ref))
		if err != nil {
			return nil, err
		}
		if x.Description != "" {
			body.Description = x.Description
		}
		if x.Default != nil {
			body.Default = x.Default
		}
		body.Nullable = body.Nullable || x.Nullable
		return body, nil
	}
	var err error
	for k, p := range x.Properties {
		if x.Properties[k], err = s.inline(p, path); err != nil {
			return nil, err
		}
	}
	for _, p := range []**Schema{&x.AdditionalProperties, &x.Items, &x.Not, &x.If, &x.Then, &x.Else} {
		if *p, err = s.inline(*p, path); err != nil {
			return nil, err
		}
	}
	for _, list := range [][]*Schema{x.AllOf, x.AnyOf, x.OneOf} {
		for i, p := range list {
			if list[i], err = s.inline(p, path); err != nil {
				return nil, err
			}
		}
	}
	return x, nil
}

// reachable lists, sorted, the definitions root refers to, directly or
// through other definitions.
func (s *Set) reachable(root *Schema) ([]string, error) {
	seen := map[string]bool{}
	var missing error
	var walk func(x *Schema)
	walk = func(x *Schema) {
		if x == nil {
			return
		}
		if x.Ref != "" && !seen[x.Ref] {
			seen[x.Ref] = true
			def, ok := s.defs[x.Ref]
			if !ok {
				missing = fmt.Errorf("no definition %s", x.Ref)
				return
			}
			walk(def)
		}
		for _, p := range x.Properties {
			walk(p)
		}
		for _, p := range []*Schema{x.AdditionalProperties, x.Items, x.Not, x.If, x.Then, x.Else} {
			walk(p)
		}
		for _, list := range [][]*Schema{x.AllOf, x.AnyOf, x.OneOf} {
			for _, p := range list {
				walk(p)
			}
		}
	}
	walk(root)
	return slices.Sorted(maps.Keys(seen)), missing
}

// SchemaName is a kind's name among OpenAPI definitions: its group
// reversed, its version and its kind, as Kubernetes names them.
func SchemaName(k schemas.Kind) string {
	group, version := resid.ParseGroupVersion(k.APIVersion)
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(append(parts, version, k.Kind), ".")
}

// KubeconformPath is where kubeconform looks for a kind's schema under a
// folder, with -schema-location 'DIR/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'.
func KubeconformPath(k schemas.Kind) string {
	group, version := resid.ParseGroupVersion(k.APIVersion)
	return filepath.Join(group, strings.ToLower(k.Kind)+"_"+version+".json")
}

// KubeconformLocation is the -schema-location that finds the files
// WriteKubeconform writes under dir.
func KubeconformLocation(dir string) string {
	return filepath.ToSlash(dir) + "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"
}

// WriteKubeconform writes each kind's JSON Schema under dir, where
// KubeconformLocation finds it, and returns the files written.
func (s *Set) WriteKubeconform(dir string) ([]string, error) {
	var written []string
	for _, k := range s.kinds {
		b, err := s.JSONSchema(k)
		if err != nil {
			return written, err
		}
		path := filepath.Join(dir, KubeconformPath(k))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return written, err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// SortKinds orders kinds by group, version and kind.
func SortKinds(kinds []schemas.Kind) {
	slices.SortFunc(kinds, func(a, b schemas.Kind) int {
		ga, va := resid.ParseGroupVersion(a.APIVersion)
		gb, vb := resid.ParseGroupVersion(b.APIVersion)
		return cmp.Or(cmp.Compare(ga, gb), cmp.Compare(va, vb), cmp.Compare(a.Kind, b.Kind))
	})
}

// packageDoc is the doc comment of the package a kind is defined in,
// found through its spec, which every kind defines beside itself.
func packageDoc(def cue.Value) string {
	spec := def.LookupPath(cue.MakePath(cue.Str("spec").Optional()))
	if !spec.Exists() {
		spec = def.LookupPath(cue.MakePath(cue.Str("spec").Required()))
	}
	pkg, _ := spec.ReferencePath()
	if !pkg.Exists() {
		return ""
	}
	inst := pkg.BuildInstance()
	if inst == nil {
		return ""
	}
	var paragraphs []string
	for _, f := range inst.Files {
		for _, d := range f.Decls {
			pkg, ok := d.(*ast.Package)
			if !ok {
				continue
			}
			for _, cg := range ast.Comments(pkg) {
				if cg.Doc {
					// "Package v1 is training-operator's ...": what
					// follows "is" says what the kind is.
					text := strings.Join(strings.Fields(cg.Text()), " ")
					if rest, ok := strings.CutPrefix(text, "Package "+pkg.Name.Name+" is "); ok {
						text = rest
					}
					paragraphs = append(paragraphs, text)
				}
			}
		}
	}
	return strings.Join(paragraphs, "\n\n")
}

// marshal writes JSON as people read it: indented, HTML characters as they
// are, ending in a newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
