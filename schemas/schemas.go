// Package schemas holds the CUE schemas of the job specs trainfn accepts. They
// are the single source of truth for validation and defaults: the Go code only
// compiles them, unifies documents with them and reports what they reject.
package schemas

//go:generate go run ../hack/gen-k8s-schema -kubernetes v1.37.1 -out k8s/k8s_gen.cue

import (
	"embed"
	"fmt"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

//go:embed k8s kubeflow diengine fn trainer
var sources embed.FS

// Kind names a job spec by the apiVersion and kind users write.
type Kind struct {
	APIVersion string
	Kind       string
}

func (k Kind) String() string { return k.APIVersion + " " + k.Kind }

// Schema locates the definition documents of a kind are unified with: a
// package of the schemas embedded here and a definition in it. Which kind
// has which schema is the renderers' table (render.Kinds); this package
// keeps only its own config's.
type Schema struct {
	// Package is a CUE package path in this module, "./kubeflow/v1".
	Package string
	// Definition is the definition's name in it, "#PyTorchJob".
	Definition string
	// Source, when set, is a package's CUE text that stands alone, for a
	// kind whose schema is not embedded here (a test's); Package then
	// only names it.
	Source string
}

func (s Schema) String() string { return s.Package + " " + s.Definition }

// FunctionConfig is trainfn's own configuration, the function config of a
// KRM function run and the document that configures trainfn render.
var FunctionConfig = Kind{APIVersion: "fn.trainfn.dev/v1alpha1", Kind: "TrainFn"}

// For is where the schemas embedded here keep a kind's: the package named
// by the first label of its group and its version, the definition by its
// kind ("kubeflow.org/v1" PyTorchJob: ./kubeflow/v1 #PyTorchJob).
func For(k Kind) Schema {
	group, version, _ := strings.Cut(k.APIVersion, "/")
	dir, _, _ := strings.Cut(group, ".")
	return Schema{Package: "./" + dir + "/" + version, Definition: "#" + k.Kind}
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
	ctx       *cue.Context
	packages  map[string]cue.Value
	templates templates
	// documented keeps the schemas' comments, which only exports read.
	documented bool
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

// schema is a compiled definition, its package built on first use.
func (v *Validator) schema(s Schema) (cue.Value, error) {
	pkg, ok := v.packages[s.Package]
	if !ok {
		var err error
		if s.Source != "" {
			pkg = v.ctx.CompileString(s.Source, cue.Filename(s.Package))
			err = pkg.Err()
		} else {
			pkg, err = compile(v.ctx, s.Package, v.documented)
		}
		if err != nil {
			return cue.Value{}, err
		}
		v.packages[s.Package] = pkg
	}
	def := pkg.LookupPath(cue.ParsePath(s.Definition))
	if !def.Exists() {
		return cue.Value{}, fmt.Errorf("schema %s has no %s", s.Package, s.Definition)
	}
	return def, nil
}

// Definition is a compiled schema, the CUE definition documents are
// unified with, for exporting it in other schema languages: with its
// comments, which describe the fields.
func Definition(s Schema) (cue.Value, error) {
	return documentedSchemas().schema(s)
}

var documentedSchemas = sync.OnceValue(func() *Validator {
	v := NewValidator()
	v.documented = true
	return v
})
