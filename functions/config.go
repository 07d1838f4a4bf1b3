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

// configure takes the configuration out of docs: the options every job
// renders with, and the other documents. At most one document configures a
// run, so no option depends on the order of files. A document that is not
// shaped as an object is refused here, before anything reads it as one.
func configure(docs []Document) (options.Options, []Document, Diagnostics) {
	opts := options.Default
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
			if err := spec.Decode(&opts); err != nil {
				diags = append(diags, Diagnostic{Severity: Error, Source: doc.Source, Line: startLine(doc),
					Message: "reading the configuration: " + err.Error()})
			}
		}
		if opts.MPI.LaunchMode == "" {
			opts.MPI = options.Default.MPI
		}
		if opts.DI.ServerURL == "" {
			opts.DI = options.Default.DI
		}
	}
	return opts, rest, diags
}
