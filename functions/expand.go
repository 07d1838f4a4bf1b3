package functions

import (
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/schemas"
)

// jobGroups are the API groups of the kinds trainfn expands. Another kind
// of such a group is a job kind trainfn does not expand, which passes
// through with a warning, since an operator in the cluster may expect it.
var jobGroups = groupsOf(render.Kinds())

func groupsOf(kinds render.Registry) map[string]bool {
	groups := map[string]bool{}
	for _, k := range kinds {
		group, _ := resid.ParseGroupVersion(k.APIVersion)
		groups[group] = true
	}
	return groups
}

// PassesThrough reports whether trainfn leaves an object of this apiVersion
// and kind unexpanded for an operator in the cluster to run.
func PassesThrough(apiVersion, kind string) bool {
	if _, ok := render.Lookup(schemas.Kind{APIVersion: apiVersion, Kind: kind}); ok {
		return false
	}
	group, _ := resid.ParseGroupVersion(apiVersion)
	return jobGroups[group] && !isNearMiss(apiVersion, kind)
}

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
// A TrainFn document among docs configures the run and is not output.
//
// When any diagnostic is an error, the output is nil: nothing is half done.
func Expand(docs []Document) ([]*yaml.RNode, Diagnostics) {
	out, _, diags := expand(docs, Flags{})
	return out, diags
}

// expand is Expand with a command line's flags, also telling which
// document each object came from.
func expand(docs []Document, flags Flags) ([]*yaml.RNode, map[*yaml.RNode]Document, Diagnostics) {
	var out []*yaml.RNode
	set, docs, diags := configure(docs)
	opts := set.render
	var runtimeDiags Diagnostics
	opts.Runtimes, docs, runtimeDiags = collectRuntimes(docs)
	diags = append(diags, runtimeDiags...)
	origin := map[*yaml.RNode]Document{}
	for i, e := range expandAll(docs, opts) {
		diags = append(diags, e.diags...)
		for _, n := range e.nodes {
			origin[n] = docs[i]
		}
		out = append(out, e.nodes...)
	}
	diags = append(diags, collisions(out, origin)...)
	if set.strict || flags.Strict {
		diags = strictly(diags)
	}
	sortDiagnostics(diags)
	if diags.HasErrors() {
		return nil, nil, diags
	}
	for _, o := range out {
		// kyaml's writers drop empty annotations, and metadata left empty:
		// dropped before sorting, the content that orders objects of one
		// identity is what is written, so the output renders again in the
		// same order. Metadata that is no mapping fails the writer instead.
		_ = yaml.ClearEmptyAnnotations(o)
	}
	sortObjects(out)
	return out, origin, diags
}

// expanded is what one document expands to.
type expanded struct {
	nodes []*yaml.RNode
	diags Diagnostics
}

// docsPerWorker is how many documents make another goroutine worth its
// start: each builds the schemas it needs for itself, 4 to 7 ms a package
// (BenchmarkCompile in schemas), where validating and rendering a job costs
// 0.6 to 1 ms (BenchmarkExpandJob), so a worker that meets every kind has
// spent about as long on schemas as on 16 jobs.
const docsPerWorker = 16

// expandAll expands every document, on every core: documents are
// independent. Results keep the documents' order.
func expandAll(docs []Document, opts options.Options) []expanded {
	results := make([]expanded, len(docs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(docs)/docsPerWorker)) {
		wg.Go(func() {
			// Rendered objects hold no CUE value, so the Validator is done
			// with once its documents are.
			validator := schemas.TakeValidator()
			defer validator.Return()
			for i := int(next.Add(1) - 1); i < len(docs); i = int(next.Add(1) - 1) {
				results[i].nodes, results[i].diags = expandOne(docs[i], opts, validator)
			}
		})
	}
	wg.Wait()
	return results
}

func expandOne(doc Document, config options.Options, validator *schemas.Validator) ([]*yaml.RNode, Diagnostics) {
	meta, err := doc.Node.GetMeta()
	if err != nil || meta.APIVersion == "" || meta.Kind == "" {
		return nil, Diagnostics{{Severity: Error, Source: doc.Source, Line: startLine(doc),
			Message: "not a Kubernetes object: apiVersion and kind are required"}}
	}
	kind := schemas.Kind{APIVersion: meta.APIVersion, Kind: meta.Kind}
	if _, ok := render.Lookup(kind); !ok {
		if diags := nearMiss(doc, kind); diags != nil {
			return nil, diags
		}
		if PassesThrough(meta.APIVersion, meta.Kind) {
			return []*yaml.RNode{doc.Node}, Diagnostics{{Severity: Warning, Source: doc.Source, Resource: resourceOf(doc.Node.YNode()),
				Line: startLine(doc), Message: fmt.Sprintf("passed through unchanged: trainfn does not expand %s", kind)}}
		}
		return []*yaml.RNode{doc.Node}, nil
	}
	objects, problems := render.Render(doc.Node, config, validator)
	return objects, append(problemDiagnostics(doc, Error, problems.Errors), problemDiagnostics(doc, Warning, problems.Warnings)...)
}

// problemDiagnostics places problems of a document in its file.
func problemDiagnostics(doc Document, sev Severity, problems schemas.Problems) Diagnostics {
	ref := resourceOf(doc.Node.YNode())
	var diags Diagnostics
	for _, p := range problems {
		d := Diagnostic{Severity: sev, Source: doc.Source, Resource: ref, Field: p.Field,
			Message: fileLines(p.Message, doc.Source)}
		d.Line, d.Column = absolute(doc.Source, p.Line, p.Column)
		diags = append(diags, d)
	}
	return diags
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

// startLine is the line in its file where a document, or a List's item,
// starts; 0 when unknown.
func startLine(doc Document) int {
	line, _ := absolute(doc.Source, doc.Node.YNode().Line, 0)
	if line == 0 {
		return doc.Source.Line
	}
	return line
}

var lineMention = regexp.MustCompile(`\bline (\d+)`)

// fileLines rewrites the document lines a message mentions ("already
// defined at line 6") as lines of the file.
func fileLines(msg string, src Source) string {
	if src.Line <= 1 {
		return msg
	}
	return lineMention.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		return "line " + strconv.Itoa(n+src.Line-1)
	})
}

// collisions reports output objects with the same identity: applying both
// would leave one of them silently overwritten. Each is reported once, at
// its second origin in file order, naming every origin.
func collisions(objects []*yaml.RNode, origin map[*yaml.RNode]Document) Diagnostics {
	byID := map[resid.ResId][]Document{}
	var ids []resid.ResId
	for _, o := range objects {
		id := resid.FromRNode(o)
		if id.Name == "" {
			// generateName: the API server names each one.
			continue
		}
		if _, seen := byID[id]; !seen {
			ids = append(ids, id)
		}
		byID[id] = append(byID[id], origin[o])
	}
	var diags Diagnostics
	for _, id := range ids {
		docs := byID[id]
		if len(docs) < 2 {
			continue
		}
		sort.SliceStable(docs, func(i, j int) bool { return sourceLess(docs[i], docs[j]) })
		names := make([]string, len(docs))
		for i, d := range docs {
			names[i] = describe(d)
		}
		second := docs[1]
		diags = append(diags, Diagnostic{Severity: Error, Source: second.Source, Line: startLine(second),
			Resource: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: id.ApiVersion(), Kind: id.Kind},
				NameMeta: yaml.NameMeta{Name: id.Name, Namespace: id.Namespace}},
			Message: "this object is output more than once: by " + strings.Join(names, " and by ")})
	}
	return diags
}

func sourceLess(a, b Document) bool {
	if a.Source.Path != b.Source.Path {
		return a.Source.Path < b.Source.Path
	}
	if la, lb := startLine(a), startLine(b); la != lb {
		return la < lb
	}
	return a.Source.Index < b.Source.Index
}

func describe(d Document) string {
	s := d.Node.GetKind()
	if id := resourceOf(d.Node.YNode()); id != nil {
		s += " " + id.Name
	}
	if d.Source.Path != "" {
		s += " (" + where(d) + ")"
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
			return a.Gvk.IsLessThan(b.Gvk) //nolint:staticcheck // named as in the Equals above, which ResId defines for itself
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		// Only objects named by generateName share an identity; their
		// content orders them, not the order they came in.
		return objects[i].MustString() < objects[j].MustString()
	})
}

func sortDiagnostics(ds Diagnostics) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Source.Path != b.Source.Path {
			return a.Source.Path < b.Source.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Source.Index != b.Source.Index {
			return a.Source.Index < b.Source.Index
		}
		return a.String() < b.String()
	})
}
