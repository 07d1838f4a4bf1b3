package functions

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/schemas"
)

func isConfig(n *yaml.RNode) bool {
	return kindOf(n) == schemas.FunctionConfig
}

// kindOf is a document's apiVersion and kind; none for a document that is
// not a mapping, whose items kyaml's getters would read as keys and values
// (and, for an odd number of them, panic).
func kindOf(n *yaml.RNode) schemas.Kind {
	if n.YNode().Kind != yaml.MappingNode {
		return schemas.Kind{}
	}
	return schemas.Kind{APIVersion: n.GetApiVersion(), Kind: n.GetKind()}
}

// settings are what a TrainFn configures: the options every job renders
// with, and how the run takes a warning.
type settings struct {
	render options.Options
	// strict fails the run on a warning, as on an error.
	strict bool
}

// Flags are what a command line sets for a run beside its TrainFn. They
// add to what the TrainFn says, never take from it: a configuration that
// asks for a strict run has one.
type Flags struct {
	// Strict makes every warning an error: nothing is output, as helm lint
	// --strict fails a chart.
	Strict bool
}

// configure takes the configuration out of docs: the options every job
// renders with, and the other documents. At most one document configures a
// run, so no option depends on the order of files. A document that is not
// shaped as an object is refused here, before anything reads it as one.
func configure(docs []Document) (settings, []Document, Diagnostics) {
	opts := options.Default
	var strict bool
	var rest []Document
	var diags Diagnostics
	var first *Document
	for i, doc := range docs {
		if problem := shapeProblem(doc.Node); problem != "" {
			diags = append(diags, Diagnostic{Severity: Error, Source: doc.Source, Line: startLine(doc), Message: problem})
			continue
		}
		if !isConfig(doc.Node) {
			rest = append(rest, doc)
			continue
		}
		if first != nil {
			diags = append(diags, Diagnostic{Severity: Error, Source: doc.Source, Line: startLine(doc),
				Message: "a second " + schemas.FunctionConfig.String() + ": one configures a run, and " + describe(*first) + " already does"})
			continue
		}
		first = &docs[i]
		valid, problems := schemas.Validate(doc.Node, schemas.For(schemas.FunctionConfig))
		if problems != nil {
			diags = append(diags, problemDiagnostics(doc, Error, problems)...)
			continue
		}
		if spec := valid.Lookup("spec"); spec.Exists() {
			var run struct {
				Strict bool `json:"strict"`
			}
			err := spec.Decode(&opts)
			if err == nil {
				err = spec.Decode(&run)
			}
			if err != nil {
				diags = append(diags, Diagnostic{Severity: Error, Source: doc.Source, Line: startLine(doc),
					Message: "reading the configuration: " + err.Error()})
			}
			strict = run.Strict
		}
		if opts.MPI.LaunchMode == "" {
			opts.MPI = options.Default.MPI
		}
		if opts.DI.ServerURL == "" {
			opts.DI = options.Default.DI
		}
	}
	return settings{render: opts, strict: strict}, rest, diags
}

// strictly makes every warning an error, for a strict run: its message is
// what it was, and like any error it stops the output.
func strictly(diags Diagnostics) Diagnostics {
	for i := range diags {
		if diags[i].Severity == Warning {
			diags[i].Severity = Error
		}
	}
	return diags
}
