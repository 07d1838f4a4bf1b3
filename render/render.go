// Package render expands validated job specs into the native Kubernetes
// objects that run them. Rendering is pure: no clock, no randomness, no
// network, so the same spec always gives the same bytes.
//
// Every kind runs the same pipeline: its schema validates and defaults the
// document; the kind decodes it into its model, checks what the schema
// cannot say and builds its objects; then the passes every kind shares run:
// gang scheduling, progress reporting, the checks of what the API server
// would refuse, the render digest and quoting for YAML 1.1 readers. A kind
// is a package that decodes, checks and builds, and one line of the table
// in kinds.go.
package render

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/downward"
	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/gitops"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/progress"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/ynode"
	"github.com/trainfn/trainfn/schemas"
)

// Job is a job spec decoded into its kind's model.
type Job interface {
	// Check reports what the schema cannot say and the build relies on:
	// rules across fields, and limits of what the objects may hold.
	Check() field.ErrorList
	// Build renders the job's objects, and the workloads whose pods make
	// its gang, should a gang scheduler be chosen.
	Build() (result.Output, gang.Gang, field.ErrorList)
}

// schedulerChooser is a Job whose spec names a gang scheduler, used when
// the run names none (a TrainJob's runtime, by its podGroupPolicy).
type schedulerChooser interface {
	GangOptions(options.Gang) options.Gang
}

// Decoder reads a document its schema accepted, defaults filled in, into
// the kind's model, with the options the job renders with. An error is a
// bug (the schema accepted what the kind cannot read), not the user's.
type Decoder func(*schemas.Validated, options.Options) (Job, []result.Warning, error)

// Kind is a job kind trainfn expands.
type Kind struct {
	schemas.Kind
	// Schema validates and defaults the kind's documents.
	Schema schemas.Schema
	Decode Decoder
}

// Register makes a kind of a package's decoder, with the schema embedded
// for its apiVersion and kind.
func Register[J Job](apiVersion, kind string, decode func(*schemas.Validated, options.Options) (J, []result.Warning, error)) Kind {
	k := schemas.Kind{APIVersion: apiVersion, Kind: kind}
	return Kind{Kind: k, Schema: schemas.For(k), Decode: func(v *schemas.Validated, opts options.Options) (Job, []result.Warning, error) {
		return decode(v, opts)
	}}
}

// WithSchema is the kind with a schema of its own, for a kind whose schema
// is not embedded in trainfn.
func (k Kind) WithSchema(s schemas.Schema) Kind {
	k.Schema = s
	return k
}

// Registry is a table of the kinds rendered.
type Registry []Kind

// With is the registry with more kinds.
func (r Registry) With(kinds ...Kind) Registry {
	return append(append(Registry{}, r...), kinds...)
}

// Lookup finds the kind of an apiVersion and kind.
func (r Registry) Lookup(k schemas.Kind) (Kind, bool) {
	for _, kind := range r {
		if kind.Kind == k {
			return kind, true
		}
	}
	return Kind{}, false
}

// KindList are the apiVersions and kinds of the registry, in its order.
func (r Registry) KindList() []schemas.Kind {
	out := make([]schemas.Kind, len(r))
	for i, k := range r {
		out[i] = k.Kind
	}
	return out
}

// SchemaOf is the schema of a kind of the registry.
func (r Registry) SchemaOf(k schemas.Kind) (schemas.Schema, bool) {
	kind, ok := r.Lookup(k)
	return kind.Schema, ok
}

// Kinds are the kinds trainfn expands.
func Kinds() Registry { return kinds }

// Lookup finds one of the kinds trainfn expands.
func Lookup(k schemas.Kind) (Kind, bool) { return kinds.Lookup(k) }

// Render expands one document of a kind trainfn expands; see
// Registry.Render.
func Render(doc *yaml.RNode, opts options.Options, v *schemas.Validator) ([]*yaml.RNode, Problems) {
	return kinds.Render(doc, opts, v)
}

// Problems are what rendering a document found wrong, and what a user
// should know of one that renders, positioned in the document.
type Problems struct {
	Errors, Warnings schemas.Problems
}

// Render expands one document of a kind in the registry into its objects,
// with the options of the run, which the job's annotations refine. On any
// error it returns no object: nothing is half done. Every problem is
// placed in doc, which is left as it came.
func (r Registry) Render(doc *yaml.RNode, opts options.Options, v *schemas.Validator) ([]*yaml.RNode, Problems) {
	kind, ok := r.Lookup(schemas.Kind{APIVersion: doc.GetApiVersion(), Kind: doc.GetKind()})
	if !ok {
		return nil, Problems{Errors: schemas.Problems{{Message: fmt.Sprintf("trainfn does not expand %s %s", doc.GetApiVersion(), doc.GetKind())}}}
	}
	valid, problems := v.Validate(doc, kind.Schema)
	if problems != nil {
		return nil, Problems{Errors: problems}
	}
	out, errs := run(kind, valid, opts)
	return out.Objects, Problems{Errors: placed(doc, errs), Warnings: placedWarnings(doc, out.Warnings)}
}

// run takes a valid document through the kind's phases and the shared
// passes, stopping at the first phase that finds an error. Errors in the
// job's metadata, which every object would carry, are reported with it,
// as the API server would report them together.
func run(kind Kind, valid *schemas.Validated, opts options.Options) (result.Output, field.ErrorList) {
	doc := valid.Doc
	// What the job's document carries that the render ignores or does not pass on.
	leftovers := append(leftoverWarnings(doc), kueueKeyWarnings(doc)...)
	meta := metadataErrors(doc)
	opts, errs := opts.ForJob(annotations(doc), labels(doc))
	if len(errs) > 0 {
		return result.Output{Warnings: leftovers}, append(meta, errs...)
	}
	job, warnings, err := kind.Decode(valid, opts)
	if err != nil {
		return result.Output{Warnings: leftovers}, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	if errs := job.Check(); len(errs) > 0 {
		return result.Output{Warnings: append(warnings, leftovers...)}, append(meta, errs...)
	}
	out, g, errs := job.Build()
	if len(errs) == 0 {
		var scheduling []*yaml.RNode
		var gangWarnings []result.Warning
		gangOpts := opts.Gang
		if c, ok := job.(schedulerChooser); ok {
			gangOpts = c.GangOptions(gangOpts)
		}
		scheduling, gangWarnings, errs = gang.Render(g, gangOpts)
		out.Objects = append(out.Objects, scheduling...)
		out.Warnings = slices.Concat(out.Warnings, gangWarnings, downward.Check(g.Members))
		if gangOpts.Scheduler == options.Kueue {
			out.Warnings = append(out.Warnings, admittedByKueue(doc, out.Objects)...)
		}
	}
	if len(errs) == 0 && opts.Progress {
		var progressWarnings []result.Warning
		out.Objects, progressWarnings, errs = progress.Render(doc, out.Objects, opts.ProgressServer)
		out.Warnings = append(out.Warnings, progressWarnings...)
	}
	if len(errs) > 0 || len(meta) > 0 {
		return result.Output{Warnings: append(warnings, leftovers...)}, append(meta, errs...)
	}
	out.Warnings = slices.Concat(warnings, out.Warnings, leftovers)
	if err := markKind(out.Objects, kind.Kind.Kind); err != nil {
		return result.Output{Warnings: out.Warnings}, field.ErrorList{field.InternalError(nil, err)}
	}
	if errs := sizeErrors(doc, out.Objects); len(errs) > 0 {
		return result.Output{Warnings: out.Warnings}, errs
	}
	if err := gitops.Stamp(out.Objects); err != nil {
		return result.Output{Warnings: out.Warnings}, field.ErrorList{field.InternalError(nil, err)}
	}
	for _, o := range out.Objects {
		ynode.QuoteForYAML11(o.YNode())
	}
	return out, nil
}

// annotations are the job's own; none when its metadata cannot be read,
// which the schema has refused.
func annotations(doc *yaml.RNode) map[string]string {
	meta, err := doc.GetMeta()
	if err != nil {
		return nil
	}
	return meta.Annotations
}

// labels are the job's own; none when its metadata cannot be read, which
// the schema has refused.
func labels(doc *yaml.RNode) map[string]string {
	meta, err := doc.GetMeta()
	if err != nil {
		return nil
	}
	return meta.Labels
}

// placed positions errors in doc.
func placed(doc *yaml.RNode, errs field.ErrorList) schemas.Problems {
	if len(errs) == 0 {
		return nil
	}
	out := make(schemas.Problems, 0, len(errs))
	for _, e := range errs {
		out = append(out, schemas.FieldProblem(doc, e))
	}
	return out
}

// placedWarnings positions warnings in doc.
func placedWarnings(doc *yaml.RNode, warnings []result.Warning) schemas.Problems {
	if len(warnings) == 0 {
		return nil
	}
	out := make(schemas.Problems, 0, len(warnings))
	for _, w := range warnings {
		out = append(out, schemas.ProblemAt(doc, w.Field.String(), w.Message))
	}
	return out
}
