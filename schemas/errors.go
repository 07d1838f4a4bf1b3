package schemas

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	cueerrors "cuelang.org/go/cue/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// explain turns what CUE reports into problems a user can act on: the field
// path, the value found, and the rule in words. Rules written in the schemas
// with error("...") are passed through; CUE's own messages (conflicts,
// bounds, closed structs) are reworded here once for every schema.
//
// One wrong value can break several constraints at once; per field, the
// most telling is reported: a value of the wrong type, else the rules it
// breaks (bounds, the schema's own rules), else the values it is not.
func explain(err error, def, data cue.Value, doc *yaml.RNode) Problems {
	var rules, validators, unknown Problems
	var conflicts []conflict
	for _, e := range cueerrors.Errors(err) {
		labels := cueLabels(e.Path())
		if hidden(labels) {
			continue
		}
		path, line, col := locate(doc.YNode(), labels)
		at := func(fe *field.Error) Problem { return fieldProblem(fe, line, col) }
		format, args := e.Msg()
		found, foundKind := valueAt(data, labels)
		switch {
		case format == "%d errors in empty disjunction:" || strings.HasPrefix(format, "invalid interpolation"):
			// Summaries and echoes of errors reported on their own.
		case format == "field not allowed":
			// Reported again by structuralProblems when the schema alone
			// tells; where a rule of the schema needs the document to be
			// evaluated (a comprehension over its containers, say), only
			// CUE knows, so it is reported here too. dedupe merges them.
			if n := len(labels); n > 0 {
				parent, known := schemaAt(def, labels[:n-1])
				unknown = append(unknown, unknownField(parent, known, labels[n-1], path, line, col))
			}
		case format == "field is required but not present" || strings.HasPrefix(format, "incomplete value"):
			rules = append(rules, at(field.Required(path, "")))
		case strings.HasPrefix(format, "conflicting values"):
			conflicts = append(conflicts, conflict{path: path, line: line, col: col, found: found, foundKind: foundKind, args: args})
		case format == "invalid value %v (out of bound %s)" && len(args) == 2:
			rules = append(rules, at(field.Invalid(path, found, boundRule(fmt.Sprint(args[1])))))
		case format == "invalid value %s (does not satisfy %s)" && len(args) == 2:
			validators = append(validators, at(field.Invalid(path, found, validatorRule(fmt.Sprint(args[1])))))
		case format == "incompatible list lengths (%d and %d)" && len(args) == 2:
			rules = append(rules, at(field.Invalid(path, found, listLengthRule(args[1]))))
		default:
			// A rule the schema words itself. When its message refers to a
			// value that could not be computed, another error caused it.
			if !allStrings(args) {
				break
			}
			if msg := fmt.Sprintf(format, args...); foundKind == "" {
				// The rule asks for a field the document lacks.
				rules = append(rules, at(field.Required(path, msg)))
			} else {
				rules = append(rules, at(field.Invalid(path, found, msg)))
			}
		}
	}

	// Batches in order of precedence: a batch adds nothing at a field an
	// earlier batch spoke of, unless it always applies.
	var out Problems
	reported := map[string]bool{}
	add := func(batch Problems, always bool) {
		var fields []string
		for _, p := range batch {
			if always || !reported[p.Field] {
				out = append(out, p)
				fields = append(fields, p.Field)
			}
		}
		for _, f := range fields {
			reported[f] = true
		}
	}
	typed, valued := explainConflicts(conflicts)
	add(typed, true)
	add(rules, false)
	add(valued, false)
	// A failed disjunction also fails the validator that chose among its
	// branches (matchN for int-or-string); the conflict says it better.
	add(validators, false)
	// CUE leaves out unknown and missing fields of a struct that has other
	// errors, so they are looked for separately, against the schema alone.
	add(structuralProblems(def, doc.YNode(), doc.YNode(), nil), true)
	add(unknown, true)

	out = dedupe(out)
	if len(out) == 0 {
		// Never accept a document CUE rejected, even if no rule above
		// could word the reason: each of CUE's errors, where it is.
		out = unworded(err, doc)
	}
	out.sort()
	return out
}

// unworded are CUE's errors as CUE words them, each at its field, for a
// rejection no rule above could put in words.
func unworded(err error, doc *yaml.RNode) Problems {
	var out Problems
	for _, e := range cueerrors.Errors(err) {
		path, line, col := locate(doc.YNode(), cueLabels(e.Path()))
		format, args := e.Msg()
		p := Problem{Message: fmt.Sprintf(format, args...), Line: line, Column: col}
		if path != nil {
			p.Field = path.String()
		}
		out = append(out, p)
	}
	return out
}

// schemaAt is the schema of the field at labels, looked up through
// fields, optional and required ones and patterns alike, and list
// elements; false when the schema has no such field.
func schemaAt(schema cue.Value, labels []string) (cue.Value, bool) {
	for _, l := range labels {
		if _, err := strconv.Atoi(l); err == nil {
			if elem, ok := listElement(schema); ok {
				schema = elem
				continue
			}
		}
		v, ok := lookupField(schema, l)
		if !ok {
			return cue.Value{}, false
		}
		schema = v
	}
	return schema, true
}

// listElement is the schema of a list's elements. A list schema that
// fails on its own, such as one with a minimum length (no document has
// filled it in), has no element to look up: its conjuncts still do.
func listElement(schema cue.Value) (cue.Value, bool) {
	if elem := schema.LookupPath(cue.MakePath(cue.AnyIndex)); elem.Exists() {
		return elem, true
	}
	if op, args := schema.Expr(); op == cue.AndOp {
		for _, a := range args {
			if elem := a.LookupPath(cue.MakePath(cue.AnyIndex)); elem.Exists() {
				return elem, true
			}
		}
	}
	return cue.Value{}, false
}

// unknownField is the problem of a mapping key its schema does not allow:
// what it is, the allowed name it most likely meant, and, for a name known
// to come from elsewhere, where.
// known tells whether parent, the schema of the mapping, could be found.
func unknownField(parent cue.Value, known bool, name string, path *field.Path, line, col int) Problem {
	detail := "unknown field"
	if known {
		if hint := misplaced(parent, name, path); hint != "" {
			detail += ": " + hint
		} else if near := nearest(name, fieldNames(parent)); near != "" {
			detail += fmt.Sprintf(" (did you mean %q?)", near)
		}
	}
	return fieldProblem(field.Forbidden(path, detail), line, col)
}

func dedupe(ps Problems) Problems {
	seen := map[Problem]bool{}
	out := ps[:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// conflict is one "conflicting values" error; several at one path are one
// problem: a value of the wrong type, or a value outside an enumeration.
type conflict struct {
	path      *field.Path
	line, col int
	found     any
	foundKind string
	args      []any
}

// explainConflicts words the conflicts of each path: typed are those where
// the document's value has the wrong type, valued those where it is not one
// of the values the schema allows.
func explainConflicts(all []conflict) (typed, valued Problems) {
	var order []string
	byPath := map[string][]conflict{}
	for _, c := range all {
		k := c.path.String()
		if _, ok := byPath[k]; !ok {
			order = append(order, k)
		}
		byPath[k] = append(byPath[k], c)
	}
	for _, k := range order {
		cs := byPath[k]
		first := cs[0]
		foundText := cueText(first.found)
		var literals, wantKinds []string
		for _, c := range cs {
			if len(c.args) < 2 {
				continue
			}
			// One side is the document's value, the other the schema's.
			// "(mismatched types %s and %s)" adds their kinds, which tell
			// them apart; otherwise the values do.
			a, b := fmt.Sprint(c.args[0]), fmt.Sprint(c.args[1])
			if len(c.args) == 4 {
				want := 3
				if fmt.Sprint(c.args[3]) == c.foundKind {
					want = 2
				}
				if k := kindPhrase(fmt.Sprint(c.args[want])); !slices.Contains(wantKinds, k) {
					wantKinds = append(wantKinds, k)
				}
				continue
			}
			want := b
			if b == foundText {
				want = a
			}
			if isLiteral(want) {
				literals = append(literals, want)
			}
		}
		switch {
		case len(wantKinds) > 0:
			typed = append(typed, fieldProblem(field.Invalid(first.path, first.found, "must be "+strings.Join(wantKinds, " or ")), first.line, first.col))
		case len(literals) > 1:
			valued = append(valued, fieldProblem(field.NotSupported(first.path, first.found, unquoteAll(literals)), first.line, first.col))
		case len(literals) == 1:
			valued = append(valued, fieldProblem(field.Invalid(first.path, first.found, "must be "+literals[0]), first.line, first.col))
		default:
			valued = append(valued, fieldProblem(field.Invalid(first.path, first.found, "conflicts with the schema"), first.line, first.col))
		}
	}
	return typed, valued
}

// structuralProblems walks the document beside the schema and reports every
// mapping key the schema does not allow (with the closest allowed name) and
// every required field that is missing.
func structuralProblems(schema cue.Value, root, node *yaml.Node, path []string) Problems {
	var out Problems
	switch node.Kind {
	case yaml.MappingNode:
		present := map[string]bool{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			key, value := node.Content[i], node.Content[i+1]
			present[key.Value] = true
			sub := slices.Concat(path, []string{key.Value})
			if fieldSchema, ok := lookupField(schema, key.Value); ok {
				out = append(out, structuralProblems(fieldSchema, root, value, sub)...)
				continue
			}
			if allows(schema, key.Value) {
				continue
			}
			p, _, _ := locate(root, sub)
			out = append(out, unknownField(schema, true, key.Value, p, key.Line, key.Column))
		}
		for _, name := range requiredFields(schema) {
			if !present[name] {
				p, line, col := locate(root, append(path[:len(path):len(path)], name))
				out = append(out, fieldProblem(field.Required(p, ""), line, col))
			}
		}
	case yaml.SequenceNode:
		elem, ok := listElement(schema)
		if !ok {
			return nil
		}
		for i, item := range node.Content {
			out = append(out, structuralProblems(elem, root, item, append(path[:len(path):len(path)], strconv.Itoa(i)))...)
		}
	}
	return out
}

// allows tells whether a struct's schema lets a field of that name be,
// beyond those lookupField finds. A schema that fails on its own (a rule
// of it needs a document to be computed) cannot say whether it is open:
// CUE allows anything there, so only the fields lookupField finds are.
func allows(schema cue.Value, name string) bool {
	if schema.IncompleteKind() == cue.BottomKind {
		return false
	}
	return schema.Allows(cue.Str(name))
}

// lookupField finds the schema of a field whether it is declared regular,
// optional or required, or matched by a pattern such as map keys.
func lookupField(schema cue.Value, name string) (cue.Value, bool) {
	sel := cue.Str(name)
	for _, s := range []cue.Selector{sel, sel.Optional(), sel.Required()} {
		if v := schema.LookupPath(cue.MakePath(s)); v.Exists() {
			return v, true
		}
	}
	if v := schema.LookupPath(cue.MakePath(cue.AnyString)); v.Exists() {
		return v, true
	}
	return cue.Value{}, false
}

func requiredFields(schema cue.Value) []string {
	var names []string
	for _, sel := range fieldSelectors(schema) {
		if sel.ConstraintType() == cue.RequiredConstraint {
			names = append(names, sel.Unquoted())
		}
	}
	return names
}

func fieldNames(schema cue.Value) []string {
	var names []string
	for _, sel := range fieldSelectors(schema) {
		names = append(names, sel.Unquoted())
	}
	return names
}

func fieldSelectors(schema cue.Value) []cue.Selector {
	it, err := schema.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	var sels []cue.Selector
	for it.Next() {
		if !NotAllowed(it.Value()) {
			sels = append(sels, it.Selector())
		}
	}
	return sels
}

// NotAllowed reports whether a field of a schema is one no document may
// have: a closed struct declares it and another, unified with it, does not
// (Kubernetes' ObjectMeta and a template's embedded subset of it).
func NotAllowed(field cue.Value) bool {
	for _, e := range cueerrors.Errors(field.Err()) {
		if format, _ := e.Msg(); format == "field not allowed" {
			return true
		}
	}
	return false
}
