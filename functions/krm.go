package functions

import (
	"bytes"
	"cmp"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/schemas"
)

// Function is trainfn as a KRM function. As a transformer it expands the job
// specs among the items; as a generator (the function config is itself a
// job spec, as kustomize's `generators:` passes it) it adds the objects the
// config renders to the items. A TrainFn function config sets the options
// every job renders with.
//
// On any error the items are left as they came and the results say why,
// each with the file, the field path and the rule.
type Function struct{}

var _ framework.ResourceListProcessor = Function{}

// Process implements framework.ResourceListProcessor.
func (f Function) Process(rl *framework.ResourceList) error {
	if diags := f.Diagnose(rl); diags.HasErrors() {
		return diags
	}
	return nil
}

// Diagnose expands rl in place and returns every diagnostic, warnings too,
// which rl's results also hold.
func (Function) Diagnose(rl *framework.ResourceList) Diagnostics {
	if diags := unreadConfig(rl.FunctionConfig); diags != nil {
		rl.Results = results(diags)
		return diags
	}
	docs := make([]Document, 0, len(rl.Items)+1)
	var configs []*yaml.RNode
	for _, item := range rl.Items {
		docs = append(docs, Document{Node: item, Source: annotatedSource(item)})
		if path, _, _ := kioutil.GetFileAnnotations(item); isConfig(item) && path != "" {
			configs = append(configs, item)
		}
	}
	if config := rl.FunctionConfig; config != nil && (isJobSpec(config) || isConfig(config)) && !contains(rl.Items, config) {
		docs = append(docs, Document{Node: config, Source: annotatedSource(config)})
	}
	out, origin, diags := expand(docs, Flags{})
	// A configuration among the items that came from a file of a package,
	// such as a Kptfile's configPath, stays there. Any other is consumed,
	// as by trainfn render: there is no TrainFn kind to apply.
	out = append(out, configs...)
	if !diags.HasErrors() {
		if err := placeInJobFiles(out, origin); err != nil {
			diags = append(diags, Diagnostic{Severity: Error, Message: "placing the rendered objects in files: " + err.Error()})
		}
	}
	rl.Results = results(diags)
	if !diags.HasErrors() {
		rl.Items = out
	}
	return diags
}

// unreadConfig refuses a function config trainfn would otherwise ignore:
// options are read from a TrainFn only, never from a ConfigMap such as
// `kpt fn eval -- key=value` or a Kptfile's configMap: make. The empty
// ConfigMap kpt passes when it was given no config says nothing.
func unreadConfig(config *yaml.RNode) Diagnostics {
	if config == nil || config.IsNilOrEmpty() || isJobSpec(config) || isConfig(config) || isEmptyConfigMap(config) {
		return nil
	}
	if diags := nearMiss(Document{Node: config, Source: annotatedSource(config)}, kindOf(config)); diags != nil {
		// A generator's job spec, or a TrainFn, with a typo.
		return diags
	}
	kind := strings.TrimSpace(kindOf(config).String())
	return Diagnostics{{Severity: Error, Source: annotatedSource(config),
		Message: fmt.Sprintf("the function config is a %s: trainfn reads its options from a %s (or expands a job spec given as the config), and would ignore this one", cmp.Or(kind, "document without a kind"), schemas.FunctionConfig)}}
}

func isEmptyConfigMap(n *yaml.RNode) bool {
	if kindOf(n) != (schemas.Kind{APIVersion: "v1", Kind: "ConfigMap"}) {
		return false
	}
	for _, field := range []string{"data", "binaryData"} {
		if v := n.Field(field); v != nil && len(v.Value.Content()) > 0 {
			return false
		}
	}
	return true
}

// placeInJobFiles puts what a job renders in the job's own file, when the
// orchestrator said where items come from (kpt annotates every item;
// kustomize passes no path). kpt writes an item to the file its path
// annotation names, and one without to a file of its own; so each file's
// items are numbered afresh, in the order of the documents they came from,
// and a job's objects take its place in its file.
func placeInJobFiles(objects []*yaml.RNode, origin map[*yaml.RNode]Document) error {
	type placed struct {
		node *yaml.RNode
		from int
	}
	files := map[string][]placed{}
	var paths []string
	for _, o := range objects {
		path, index, _ := kioutil.GetFileAnnotations(o)
		if from := origin[o].Node; path == "" && from != nil {
			path, index, _ = kioutil.GetFileAnnotations(from)
		}
		if path == "" {
			continue
		}
		from, _ := strconv.Atoi(index)
		if _, seen := files[path]; !seen {
			paths = append(paths, path)
		}
		files[path] = append(files[path], placed{o, from})
	}
	for _, path := range paths {
		ps := files[path]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].from < ps[j].from })
		for i, p := range ps {
			if err := p.node.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, path)); err != nil {
				return err
			}
			if err := p.node.PipeE(yaml.SetAnnotation(kioutil.IndexAnnotation, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	}
	return nil
}

// RunFunction reads a ResourceList from rw, processes it and writes it back,
// results included, as kyaml's framework.Execute does (see execute). On
// invalid input the error is the Diagnostics.
//
// The input is checked first for what the framework reads wrongly, or
// cannot read at all (see readResourceList, readPlainStream and
// listInput.problems): such a list is written back as it came, with the
// results that say why.
func RunFunction(rw *kio.ByteReadWriter) error {
	data, refused, err := readLimited(stdinName, rw.Reader)
	if err != nil {
		return err
	}
	if refused != nil {
		return Diagnostics{*refused}
	}
	in, err := readResourceList(data)
	if err != nil {
		return err
	}
	if in != nil {
		if rw.FunctionConfig != nil {
			in.functionConfig = rw.FunctionConfig
		}
		if diags := in.problems(); diags.HasErrors() {
			if err := in.writeAsItCame(rw.Writer, diags); err != nil {
				return err
			}
			return diags
		}
	} else if err := readPlainStream(data); err != nil {
		return err
	}
	rw.Reader = bytes.NewReader(data)
	return execute(Function{}, rw)
}

// execute is kyaml's framework.Execute but for how it writes the list
// back: writeList, which holds one item's encoding at a time where kyaml
// copies every item and encodes them all at once, and writes the same
// bytes. Anything but a list whose reader annotations are kept, as the
// commands read it, is written by kyaml.
func execute(p framework.ResourceListProcessor, rw *kio.ByteReadWriter) error {
	rl := framework.ResourceList{}
	var err error
	if rl.Items, err = rw.Read(); err != nil {
		return fmt.Errorf("failed to read ResourceList input: %w", err)
	}
	rl.FunctionConfig = rw.FunctionConfig
	annotations, err := kio.PreprocessResourcesForInternalAnnotationMigration(rl.Items)
	if err != nil {
		return err
	}
	processed := p.Process(&rl)
	if err := kio.ReconcileInternalAnnotations(rl.Items, annotations); err != nil {
		return err
	}
	if len(rl.Results) > 0 {
		if rw.Results, err = resultsNode(rl.Results); err != nil {
			return err
		}
	}
	if rw.NoWrap || rw.WrappingKind == "" || !rw.KeepReaderAnnotations || rw.Style != 0 {
		if err := rw.Write(rl.Items); err != nil {
			return err
		}
		return processed
	}
	items := make([]*yaml.Node, len(rl.Items))
	for i, item := range rl.Items {
		// What kyaml's writer does to its copy of each item.
		if err := yaml.ClearEmptyAnnotations(item); err != nil {
			return err
		}
		items[i] = item.YNode()
	}
	var config, results *yaml.Node
	if rw.FunctionConfig != nil {
		config = rw.FunctionConfig.YNode()
	}
	if rw.Results != nil {
		results = rw.Results.YNode()
	}
	if err := writeList(rw.Writer, rw.WrappingAPIVersion, rw.WrappingKind, items, config, results); err != nil {
		return err
	}
	return processed
}

// contains reports whether items hold an object of the same identity, as
// kustomize's generators: passes the function config among the items too.
func contains(items []*yaml.RNode, n *yaml.RNode) bool {
	if shapeProblem(n) != "" {
		return false
	}
	id := resid.FromRNode(n)
	for _, item := range items {
		if shapeProblem(item) == "" && resid.FromRNode(item).Equals(id) {
			return true
		}
	}
	return false
}

func isJobSpec(n *yaml.RNode) bool {
	_, ok := render.Lookup(kindOf(n))
	return ok
}

// originAnnotation is where kustomize records a resource's file when the
// kustomization asks for `buildMetadata: [originAnnotations]`; it passes no
// path annotation to exec functions otherwise.
const originAnnotation = "config.kubernetes.io/origin"

// annotatedSource reads where an orchestrator says an item came from.
func annotatedSource(n *yaml.RNode) Source {
	path, index, _ := kioutil.GetFileAnnotations(n)
	i, _ := strconv.Atoi(index)
	if path == "" {
		var origin struct {
			Path string `yaml:"path"`
		}
		// GetMeta, unlike GetAnnotations, reads an item that is not shaped
		// as an object without panicking; configure refuses the item.
		meta, _ := n.GetMeta()
		if o, ok := meta.Annotations[originAnnotation]; ok && yaml.Unmarshal([]byte(o), &origin) == nil {
			path = origin.Path
		}
	}
	return Source{Path: path, Index: i}
}

func results(diags Diagnostics) framework.Results {
	out := make(framework.Results, 0, len(diags))
	for _, d := range diags {
		r := &framework.Result{Message: displayable(d.Message), Severity: framework.Error, ResourceRef: d.Resource}
		if d.Severity == Warning {
			r.Severity = framework.Warning
		}
		if d.Field != "" {
			r.Field = &framework.Field{Path: d.Field}
		}
		if d.Source.Path != "" {
			r.File = &framework.File{Path: d.Source.Path, Index: d.Source.Index}
		}
		out = append(out, r)
	}
	return out
}
