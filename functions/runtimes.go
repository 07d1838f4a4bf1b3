package functions

import (
	"fmt"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
	"github.com/trainfn/trainfn/schemas"
)

// collectRuntimes takes the Kubeflow Trainer runtimes out of the input:
// the input's TrainJobs resolve their runtimeRef against them at build
// time, and they are not output (no cluster needs Trainer's CRDs for
// them). Each is validated where it is written.
func collectRuntimes(docs []Document) (runtimes.Catalog, []Document, Diagnostics) {
	var catalog runtimes.Catalog
	var rest []Document
	var diags Diagnostics
	// Taken only by an input that has runtimes: CUE builds their schema.
	var validator *schemas.Validator
	defer func() {
		if validator != nil {
			validator.Return()
		}
	}()
	for _, doc := range docs {
		if !runtimes.IsRuntime(doc.Node.GetApiVersion(), doc.Node.GetKind()) {
			rest = append(rest, doc)
			continue
		}
		if validator == nil {
			validator = schemas.TakeValidator()
		}
		rt, problems := render.Runtime(doc.Node, where(doc), validator)
		if problems != nil {
			diags = append(diags, problemDiagnostics(doc, Error, problems)...)
			catalog = append(catalog, &runtimes.Runtime{Kind: doc.Node.GetKind(), Namespace: doc.Node.GetNamespace(),
				Name: doc.Node.GetName(), Source: where(doc), Invalid: true})
			continue
		}
		catalog = append(catalog, rt)
	}
	return catalog, rest, diags
}

// where is a document's place, for messages: its file and line.
func where(doc Document) string {
	line := startLine(doc)
	switch {
	case doc.Source.Path != "" && line > 0:
		return fmt.Sprintf("%s:%d", doc.Source.Path, line)
	case doc.Source.Path != "":
		return doc.Source.Path
	case line > 0:
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("item %d", doc.Source.Index)
}
