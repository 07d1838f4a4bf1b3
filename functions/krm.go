package functions

import (
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"

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
	if diags := f.process(rl); diags.HasErrors() {
		return diags
	}
	return nil
}

// process expands rl in place and returns every diagnostic, warnings too,
// which rl's results also hold.
func (Function) process(rl *framework.ResourceList) Diagnostics {
	docs := make([]Document, 0, len(rl.Items)+1)
	for _, item := range rl.Items {
		docs = append(docs, Document{Node: item, Source: annotatedSource(item)})
	}
	if config := rl.FunctionConfig; config != nil && (isJobSpec(config) || isConfig(config)) && !contains(rl.Items, config) {
		docs = append(docs, Document{Node: config, Source: annotatedSource(config)})
	}
	out, diags := Expand(docs)
	rl.Results = results(diags)
	if !diags.HasErrors() {
		rl.Items = out
	}
	return diags
}

// RunFunction reads a ResourceList from rw, processes it and writes it back,
// results included. On invalid input the error is the Diagnostics.
func RunFunction(rw *kio.ByteReadWriter) error {
	return framework.Execute(Function{}, rw)
}

// contains reports whether items hold an object of the same identity, as
// kustomize's generators: passes the function config among the items too.
func contains(items []*yaml.RNode, n *yaml.RNode) bool {
	id := resid.FromRNode(n)
	for _, item := range items {
		if resid.FromRNode(item).Equals(id) {
			return true
		}
	}
	return false
}

func isJobSpec(n *yaml.RNode) bool {
	_, ok := renderers[schemas.Kind{APIVersion: n.GetApiVersion(), Kind: n.GetKind()}]
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
		if o, ok := n.GetAnnotations()[originAnnotation]; ok && yaml.Unmarshal([]byte(o), &origin) == nil {
			path = origin.Path
		}
	}
	return Source{Path: path, Index: i}
}

func results(diags Diagnostics) framework.Results {
	out := make(framework.Results, 0, len(diags))
	for _, d := range diags {
		r := &framework.Result{Message: d.Message, Severity: framework.Error, ResourceRef: d.Resource}
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
