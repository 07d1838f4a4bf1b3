// Package functions holds trainfn's front ends: the KRM function that
// kustomize, kpt and other orchestrators run, and the stream commands
// (render, validate) that read plain YAML files. Both replace each job spec
// with the native objects it renders and pass every other document through.
package functions

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Severity ranks a diagnostic; errors stop the output.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Source locates a document: the file it was read from (when known), its
// index among that file's documents, and the line it starts on.
type Source struct {
	Path  string
	Index int
	// Line is the first line of the document in its file; 0 when the
	// document did not come from a file this process read.
	Line int
}

// Diagnostic is one thing trainfn has to say about a document.
type Diagnostic struct {
	Severity Severity
	Source   Source
	// Resource names the document, when it has a name.
	Resource *yaml.ResourceIdentifier
	// Field is the field path in the document ("" for the whole document).
	Field string
	// Message states the rule that was broken, or the fact to know.
	Message string
	// Line and Column locate the field in its file; 0 when unknown.
	Line, Column int
}

// String reads like a compiler message:
//
//	pi.yaml:6:3: error: MPIJob pi: spec.slotPerWorker: Forbidden: unknown field
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Source.Path != "" {
		// Lines are known only for files trainfn read itself, which have a
		// path.
		b.WriteString(d.Source.Path)
		b.WriteString(position(d.Line, d.Column))
		b.WriteString(": ")
	}
	b.WriteString(string(d.Severity))
	b.WriteString(": ")
	if d.Resource != nil {
		name := d.Resource.Name
		if name == "" {
			name = "(unnamed)"
		}
		fmt.Fprintf(&b, "%s %s: ", d.Resource.Kind, name)
	}
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// position is ":line:column", ":line" or "" as far as they are known.
func position(line, column int) string {
	switch {
	case line == 0:
		return ""
	case column == 0:
		return fmt.Sprintf(":%d", line)
	}
	return fmt.Sprintf(":%d:%d", line, column)
}

// Diagnostics are what one run has to say.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Error joins the messages, one per line, so Diagnostics can be returned as
// an error.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}
