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
	{APIVersion: "kubeflow.org/v1alpha2", Kind: "MPIJob"}: {pkg: "./kubeflow/v1alpha2", name: "#MPIJob"},
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

// Validator checks documents against the schemas, building each CUE
// package on first use of one of its kinds: a run that meets no job spec
// never pays for CUE, and one that meets only MPIJobs builds only theirs.
//
// A Validator, and every value it returns, is for one goroutine at a time:
// CUE evaluates a schema lazily, the first time a document needs a part of
// it, and that evaluation writes to the schema. Goroutines that validate
// side by side each use a Validator of their own.
type Validator struct {
	ctx      *cue.Context
	packages map[string]cue.Value
}

// NewValidator returns a Validator that has built nothing yet.
func NewValidator() *Validator {
	return &Validator{ctx: cuecontext.New(), packages: map[string]cue.Value{}}
}

// sharedValidator is the Validator of the package-level functions, for
// callers that validate one document at a time.
var sharedValidator = sync.OnceValue(NewValidator)

// idle holds the Validators given back, so that a process that expands
// many streams builds its schemas once per goroutine, not once per stream.
var idle struct {
	sync.Mutex
	validators []*Validator
}

// TakeValidator returns a Validator no other goroutine has, one that has
// built schemas already when one is idle. Give it back with Return once
// done with it and with every value it returned.
func TakeValidator() *Validator {
	idle.Lock()
	defer idle.Unlock()
	if n := len(idle.validators); n > 0 {
		v := idle.validators[n-1]
		idle.validators = idle.validators[:n-1]
		return v
	}
	return NewValidator()
}

// Return gives a Validator taken with TakeValidator back.
func (v *Validator) Return() {
	idle.Lock()
	defer idle.Unlock()
	idle.validators = append(idle.validators, v)
}

// schema is a kind's compiled definition.
func (v *Validator) schema(k Kind) (cue.Value, error) {
	d, ok := definitions[k]
	if !ok {
		return cue.Value{}, fmt.Errorf("trainfn has no schema for %s", k)
	}
	pkg, ok := v.packages[d.pkg]
	if !ok {
		var err error
		if pkg, err = compile(v.ctx, d.pkg); err != nil {
			return cue.Value{}, err
		}
		v.packages[d.pkg] = pkg
	}
	def := pkg.LookupPath(cue.ParsePath(d.name))
	if !def.Exists() {
		return cue.Value{}, fmt.Errorf("schema %s has no %s", d.pkg, d.name)
	}
	return def, nil
}

func compile(ctx *cue.Context, pkg string) (cue.Value, error) {
	root, err := fs.Sub(sources, ".")
	if err != nil {
		return cue.Value{}, err
	}
	cfg := &load.Config{
		FS:         root,
		FromFSPath: func(p string) string { return "schemas" + p },
		// No registry: the schemas depend on nothing outside this module.
		Registry: noRegistry{},
	}
	insts := load.Instances([]string{pkg}, cfg)
	if len(insts) != 1 {
		return cue.Value{}, fmt.Errorf("loading schema %s: %d instances", pkg, len(insts))
	}
	if err := insts[0].Err; err != nil {
		return cue.Value{}, fmt.Errorf("loading schema %s: %w", pkg, err)
	}
	v := ctx.BuildInstance(insts[0])
	if v.Err() != nil {
		return cue.Value{}, fmt.Errorf("compiling schema %s: %w", pkg, v.Err())
	}
	return v, nil
}

// Definition is the compiled schema of a kind, the CUE definition its
// documents are unified with, for exporting it in other schema languages.
func Definition(k Kind) (cue.Value, error) {
	return sharedValidator().schema(k)
}
