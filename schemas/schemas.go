// Package schemas holds the CUE schemas of the job specs trainfn accepts. They
// are the single source of truth for validation and defaults: the Go code only
// compiles them, unifies documents with them and reports what they reject.
package schemas

//go:generate go run ../hack/gen-k8s-schema -kubernetes v1.37.1 -out k8s/k8s_gen.cue

import (
	"embed"
	"fmt"
	"io/fs"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"
)

//go:embed cue.mod/module.cue k8s kubeflow diengine fn
var sources embed.FS

// Kind names a job spec by the apiVersion and kind users write.
type Kind struct {
	APIVersion string
	Kind       string
}

func (k Kind) String() string { return k.APIVersion + " " + k.Kind }

// definition locates a kind's schema: a CUE package and a definition in it.
type definition struct {
	pkg  string
	name string
}

// FunctionConfig is trainfn's own configuration, the function config of a
// KRM function run and the document that configures trainfn render.
var FunctionConfig = Kind{APIVersion: "fn.trainfn.dev/v1alpha1", Kind: "TrainFn"}

var definitions = map[Kind]definition{
	{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"}:  {pkg: "./kubeflow/v2beta1", name: "#MPIJob"},
	{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob"}:   {pkg: "./kubeflow/v1", name: "#PyTorchJob"},
	{APIVersion: "kubeflow.org/v1", Kind: "MPIJob"}:       {pkg: "./kubeflow/v1", name: "#MPIJob"},
	{APIVersion: "kubeflow.org/v1alpha1", Kind: "MPIJob"}: {pkg: "./kubeflow/v1alpha1", name: "#MPIJob"},
	FunctionConfig: {pkg: "./fn/v1alpha1", name: "#TrainFn"},
	{APIVersion: "diengine.opendilab.org/v2alpha1", Kind: "DIJob"}: {pkg: "./diengine/v2alpha1", name: "#DIJob"},
}

// Kinds lists the kinds that have a schema.
func Kinds() []Kind {
	kinds := make([]Kind, 0, len(definitions))
	for k := range definitions {
		kinds = append(kinds, k)
	}
	return kinds
}

// compiled is every schema, built once per process on first use: a run that
// meets no job spec never pays for CUE.
var compiled = sync.OnceValues(compileAll)

type compiledSchemas struct {
	ctx  *cue.Context
	defs map[Kind]cue.Value
}

func compileAll() (*compiledSchemas, error) {
	root, err := fs.Sub(sources, ".")
	if err != nil {
		return nil, err
	}
	pkgs := map[string]bool{}
	for _, d := range definitions {
		pkgs[d.pkg] = true
	}
	args := make([]string, 0, len(pkgs))
	for p := range pkgs {
		args = append(args, p)
	}
	cfg := &load.Config{
		FS:         root,
		FromFSPath: func(p string) string { return "schemas" + p },
		// No registry: the schemas depend on nothing outside this module.
		Registry: noRegistry{},
	}
	ctx := cuecontext.New()
	values := map[string]cue.Value{}
	for _, inst := range load.Instances(args, cfg) {
		if inst.Err != nil {
			return nil, fmt.Errorf("loading schema %s: %w", inst.DisplayPath, inst.Err)
		}
		v := ctx.BuildInstance(inst)
		if v.Err() != nil {
			return nil, fmt.Errorf("compiling schema %s: %w", inst.DisplayPath, v.Err())
		}
		values[inst.DisplayPath] = v
	}
	out := &compiledSchemas{ctx: ctx, defs: map[Kind]cue.Value{}}
	for k, d := range definitions {
		pkg, ok := values[d.pkg]
		if !ok {
			return nil, fmt.Errorf("schema package %s of %s was not loaded", d.pkg, k)
		}
		def := pkg.LookupPath(cue.ParsePath(d.name))
		if !def.Exists() {
			return nil, fmt.Errorf("schema %s has no %s", d.pkg, d.name)
		}
		out.defs[k] = def
	}
	return out, nil
}

// Definition is the compiled schema of a kind, the CUE definition its
// documents are unified with, for exporting it in other schema languages.
func Definition(k Kind) (cue.Value, error) {
	c, err := compiled()
	if err != nil {
		return cue.Value{}, err
	}
	def, ok := c.defs[k]
	if !ok {
		return cue.Value{}, fmt.Errorf("trainfn has no schema for %s", k)
	}
	return def, nil
}
