// Package functions holds trainfn's front ends: the KRM function that
// kustomize, kpt and other orchestrators run, and the stream commands
// (render, validate) that read plain YAML files. Both replace each job spec
// with the native objects it renders and pass every other document through.
package functions

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

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
		switch {
		case name == "":
			name = "(unnamed)"
		case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) >= 0:
			// Quoted, a name shows its line breaks, zero-width characters
			// and right-to-left marks instead of acting on the message.
			name = strconv.Quote(name)
		}
		fmt.Fprintf(&b, "%s %s: ", d.Resource.Kind, name)
	}
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return displayable(b.String())
}

// displayable escapes what a terminal would act on rather than show:
// control characters, and format characters such as zero-width joiners and
// right-to-left overrides, which a document's names and values may hold
// and which would reorder or hide parts of a message.
func displayable(s string) string {
	if strings.IndexFunc(s, hidden) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp))
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
