package schemas

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Problem is one rule a document breaks, and where.
type Problem struct {
	// Field is the field path, as kubectl writes it; "" for the document.
	Field string
	// Message states the rule, in the vocabulary users know from kubectl
	// ("Invalid value: 2: must be 1"); it may mention document lines.
	Message string
	// Line and Column locate the field (or, when it is missing, its closest
	// present parent) in the document; 0 when unknown.
	Line, Column int
}

func (p Problem) Error() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// fieldProblem is a field error at a position.
func fieldProblem(fe *field.Error, line, column int) Problem {
	return Problem{Field: fe.Field, Message: abridged(fe), Line: line, Column: column}
}

// maxShownValue is the most of a bad value a message quotes: enough to
// recognise it, not a screenful of a pasted blob.
const maxShownValue = 64

// abridged is fe's message with its bad value cut to maxShownValue bytes
// and its full length said, for a value too long to read in one line.
func abridged(fe *field.Error) string {
	body := fe.ErrorBody()
	prefix, suffix := fe.Type.String()+": ", ""
	if fe.Detail != "" {
		suffix = ": " + fe.Detail
	}
	if !strings.HasPrefix(body, prefix) || !strings.HasSuffix(body, suffix) || len(body) < len(prefix)+len(suffix) {
		return body
	}
	value := body[len(prefix) : len(body)-len(suffix)]
	if len(value) <= maxShownValue {
		return body
	}
	cut := maxShownValue
	for cut > 0 && !utf8.RuneStart(value[cut]) {
		cut--
	}
	return fmt.Sprintf("%s%s… (%d bytes)%s", prefix, value[:cut], len(value), suffix)
}

// FieldProblem is a field error a later phase (a kind's check) finds in a
// document, placed at its field, its bad value abridged as the schema's
// own errors are.
func FieldProblem(doc *yaml.RNode, fe *field.Error) Problem {
	line, column := Position(doc, fe.Field)
	return fieldProblem(fe, line, column)
}

// ProblemAt is a problem a later phase (a renderer) finds at a field of a
// validated document, located the way validation's problems are.
func ProblemAt(doc *yaml.RNode, fieldPath, message string) Problem {
	line, column := Position(doc, fieldPath)
	return Problem{Field: fieldPath, Message: message, Line: line, Column: column}
}

// Problems are sorted by position, then by field path.
type Problems []Problem

func (ps Problems) sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.Error() < b.Error()
	})
}

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// documentProblems report what is wrong with a document as a whole; a YAML
// decoding error (a duplicate key, say) becomes one problem per line it
// names.
func documentProblems(doc *yaml.RNode, err error) Problems {
	var typeErr *yaml.TypeError
	if !errors.As(err, &typeErr) {
		return Problems{{Message: err.Error(), Line: doc.YNode().Line}}
	}
	var out Problems
	for _, msg := range typeErr.Errors {
		p := Problem{Message: msg, Line: doc.YNode().Line}
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			p.Message = strings.TrimPrefix(msg, m[0])
		}
		out = append(out, p)
	}
	return out
}

// locate turns a path of CUE labels into a field path and finds the field in
// the document. Whether a label is a list index is read off the document, so
// "0" in a list and "0" as a map key are told apart.
func locate(doc *yaml.Node, labels []string) (*field.Path, int, int) {
	var path *field.Path
	node := doc
	line, col := doc.Line, doc.Column
	for i, label := range labels {
		var next *yaml.Node
		switch {
		case node == nil:
		case node.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(node.Content); j += 2 {
				if node.Content[j].Value == label {
					next = node.Content[j+1]
					line, col = node.Content[j].Line, node.Content[j].Column
					break
				}
			}
		case node.Kind == yaml.SequenceNode:
			var index int
			if _, err := fmt.Sscanf(label, "%d", &index); err == nil && index >= 0 && index < len(node.Content) {
				next = node.Content[index]
				line, col = next.Line, next.Column
				path = path.Index(index)
				node = next
				continue
			}
		}
		path = child(path, label)
		node = next
		if node == nil {
			// Missing from the document: name the rest of the path, point at
			// the closest parent that is there.
			for _, rest := range labels[i+1:] {
				path = child(path, rest)
			}
			break
		}
	}
	return path, line, col
}

func child(p *field.Path, label string) *field.Path {
	if p == nil {
		return field.NewPath(label)
	}
	return p.Child(label)
}

// Position finds a field, given by a field path such as
// "spec.template.spec.containers[0].name", in a document; for a field that is
// not there, its closest present parent. 0, 0 when the document is nil.
func Position(doc *yaml.RNode, path string) (line, column int) {
	if doc == nil {
		return 0, 0
	}
	_, line, column = locate(doc.YNode(), splitFieldPath(path))
	return line, column
}

// splitFieldPath is the inverse of field.Path's String: dots separate
// fields, brackets hold indexes and map keys (which may contain dots).
func splitFieldPath(path string) []string {
	var labels []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			labels = append(labels, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				cur.WriteString(path[i:])
				i = len(path)
				continue
			}
			labels = append(labels, path[i+1:i+end])
			i += end
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return labels
}
