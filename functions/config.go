package functions

import (
	"cuelang.org/go/cue"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/schemas"
)

func isConfig(n *yaml.RNode) bool {
	return schemas.Kind{APIVersion: n.GetApiVersion(), Kind: n.GetKind()} == schemas.FunctionConfig
}

// configure takes the configuration out of docs: the options every job
// renders with, and the other documents. At most one document configures a
// run, so no option depends on the order of files.
func configure(docs []Document) (options.Options, []Document, Diagnostics) {
	opts := options.Default
	var rest []Document
	var diags Diagnostics
	var first *Document
	for i, doc := range docs {
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
		valid, problems := schemas.Validate(doc.Node)
		if problems != nil {
			diags = append(diags, problemDiagnostics(doc, Error, problems)...)
			continue
		}
		if spec := valid.Value.LookupPath(cue.ParsePath("spec")); spec.Exists() {
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
