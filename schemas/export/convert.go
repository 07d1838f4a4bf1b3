package export

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"github.com/trainfn/trainfn/schemas"
)

// converter turns compiled CUE definitions into schemas.
//
// CUE can say more than JSON Schema: rules that compare fields (maxReplicas
// at least minReplicas), that depend on other fields (a job name's length
// on its worker count) or that a comprehension adds are left out, so an
// exported schema never refuses what trainfn accepts; trainfn validate
// checks them. What JSON Schema can say is kept: types, enums, defaults,
// bounds, patterns, required and closed objects.
type converter struct {
	defs map[string]*Schema
	// names maps a definition's CUE reference to its schema name.
	names map[string]string
	// following are the fields whose references are being followed,
	// against cycles.
	following map[string]bool
	err       error
}

func newConverter() *converter {
	return &converter{defs: map[string]*Schema{}, names: map[string]string{}, following: map[string]bool{}}
}

func (c *converter) fail(format string, args ...any) *Schema {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
	return &Schema{}
}

// field is the schema of a struct field's value, with its documentation
// and default.
func (c *converter) field(v cue.Value, m mode) *Schema {
	s := c.value(v, m)
	doc := docText(v)
	def := defaultOf(v)
	if doc == "" && def == nil {
		return s
	}
	if s.Ref == "" && s.Description == "" && s.Default == nil {
		s.Description, s.Default = doc, def
		return s
	}
	// A ref may be shared: wrap rather than change it.
	if s.Ref != "" && s.Description == "" && s.Default == nil && !s.Nullable && refOnly(s) {
		return &Schema{Ref: s.Ref, Description: doc, Default: def}
	}
	return &Schema{Description: doc, Default: def, AllOf: []*Schema{s}}
}

func refOnly(s *Schema) bool {
	c := *s
	c.Ref = ""
	return c.IsTrue()
}

// value is the schema of a CUE value. A closed value's structs forbid
// fields they do not name, as CUE's do; an open one's leave that to the
// other conjuncts it stands beside.
func (c *converter) value(v cue.Value, m mode) *Schema {
	if name, ok := c.definitionRef(v); ok {
		return &Schema{Ref: name}
	}
	op, args := v.Expr()
	if op == cue.CallOp {
		// A validator (list.MinItems, matchN) has the kind it validates
		// but is no list or struct itself.
		return c.call(args)
	}
	kind := v.IncompleteKind()
	if v.Err() != nil && hasFields(v) {
		// A struct fails as it stands when a rule in it reads fields
		// only documents have (a let over the containers, a
		// comprehension over the sizes); its fields are all there.
		kind = cue.StructKind
	}
	switch {
	case kind == cue.StructKind:
		return c.object(v, m)
	case op == cue.AndOp && v.Err() != nil:
		// A conjunction that fails as it stands, before a document fills
		// it in (list.MinItems(1) on a list with no items yet): its
		// conjuncts are converted one by one, beside each other, so each
		// is open; the definitions they refer to are closed.
		var all []*Schema
		for _, a := range args {
			all = append(all, c.value(a, open))
		}
		return merge(all...)
	case kind == cue.ListKind:
		return c.list(v, m)
	}
	s := c.constraint(v, m)
	if s.Type == nil && s.Ref == "" && !s.IsTrue() && !s.IsFalse() {
		// An enum or a choice of patterns still has one type, which
		// editors and OpenAPI's structural schemas want to see.
		if t := kindSchema(kind); len(t.Type) == 1 {
			s = merge(t, s)
		}
	}
	return s
}

// fieldNamed finds the field of struct v that label names, whether
// regular, optional or required.
func fieldNamed(v, label cue.Value) (cue.Value, bool) {
	name, err := label.String()
	if err != nil {
		return cue.Value{}, false
	}
	fields, err := v.Fields(cue.Optional(true))
	if err != nil {
		return cue.Value{}, false
	}
	for fields.Next() {
		if fields.Selector().Unquoted() == name {
			return fields.Value(), true
		}
	}
	return cue.Value{}, false
}

// hasFields reports whether v is a struct with a field, regular, optional
// or required.
func hasFields(v cue.Value) bool {
	fields, err := v.Fields(cue.Optional(true))
	return err == nil && fields.Next()
}

// mode says whether a struct converted forbids the fields it does not name.
type mode bool

const (
	closed mode = false
	open   mode = true
)

// definitionRef names the definition v refers to, converting it the first
// time, when v is exactly such a reference. A value that refines a
// definition is converted from what it evaluates to instead, so that it is
// closed exactly where CUE closes it.
func (c *converter) definitionRef(v cue.Value) (string, bool) {
	op, _ := v.Expr()
	if op != cue.NoOp && op != cue.SelectorOp {
		return "", false
	}
	pkg, path := v.ReferencePath()
	sels := path.Selectors()
	if !pkg.Exists() || len(sels) == 0 || !sels[len(sels)-1].IsDefinition() {
		return "", false
	}
	key := importPath(pkg) + "." + path.String()
	if name, ok := c.names[key]; ok {
		return name, true
	}
	name, err := definitionName(importPath(pkg), sels)
	if err != nil {
		c.fail("%v", err)
		return "", false
	}
	c.names[key] = name
	c.defs[name] = &Schema{} // a placeholder while converting breaks cycles
	target := pkg.LookupPath(path)
	s := c.value(target, closed)
	if s.Description == "" {
		s.Description = docText(target)
	}
	c.defs[name] = s
	return name, true
}

func importPath(pkg cue.Value) string {
	if inst := pkg.BuildInstance(); inst != nil {
		return inst.ImportPath
	}
	return ""
}

// object converts a struct from its evaluated fields.
func (c *converter) object(v cue.Value, m mode) *Schema {
	s := &Schema{Type: []string{"object"}}
	fields, err := v.Fields(cue.Optional(true))
	if err != nil {
		return c.fail("%v: %v", v.Path(), err)
	}
	for fields.Next() {
		sel := fields.Selector()
		fv := fields.Value()
		if schemas.NotAllowed(fv) {
			continue
		}
		p := c.field(fv, m)
		if p.IsFalse() {
			// A field CUE forbids outright (error() alone): a closed
			// object leaves it out already.
			continue
		}
		name := sel.Unquoted()
		if isRequired(sel, fv, m) {
			s.Required = append(s.Required, name)
		} else {
			p.Nullable = true
		}
		if s.Properties == nil {
			s.Properties = map[string]*Schema{}
		}
		s.Properties[name] = p
	}
	slices.Sort(s.Required)
	if pattern := v.LookupPath(cue.MakePath(cue.AnyString)); pattern.Exists() {
		if ap := c.value(pattern, m); !ap.IsTrue() {
			s.AdditionalProperties = ap
		}
	} else if m == closed {
		s.AdditionalProperties = False()
	}
	return s
}

// isRequired: a required field (name!), or a regular one that no default
// makes concrete. Whether a default does is known only where all the
// conjuncts are: an open struct's regular fields are not required.
func isRequired(sel cue.Selector, v cue.Value, m mode) bool {
	switch sel.ConstraintType() {
	case cue.RequiredConstraint:
		return true
	case cue.OptionalConstraint:
		return false
	}
	return m == closed && v.Validate(cue.Concrete(true)) != nil && !marksDefault(v.Source())
}

// marksDefault reports whether an expression has a default (*x), which
// makes its field optional even when the default comes from another field,
// as a task's name comes from its type.
func marksDefault(n ast.Node) bool {
	if n == nil {
		return false
	}
	found := false
	ast.Walk(n, func(n ast.Node) bool {
		if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.MUL {
			found = true
		}
		return !found
	}, nil)
	return found
}

// list converts a list from its evaluated element type and length, and
// the validators among its conjuncts (list.MinItems).
func (c *converter) list(v cue.Value, m mode) *Schema {
	s := &Schema{Type: []string{"array"}}
	elem := v.LookupPath(cue.MakePath(cue.AnyIndex))
	if !elem.Exists() {
		// Closed lists (tuples) do not occur in the schemas.
		return c.fail("%v: closed lists are not exported", v.Path())
	}
	if items := c.value(elem, m); !items.IsTrue() {
		s.Items = items
	}
	if n, ok := minLength(v); ok && n > 0 {
		s.MinItems = &n
	}
	if op, args := v.Expr(); op == cue.AndOp {
		for _, a := range args {
			if aop, _ := a.Expr(); aop == cue.CallOp {
				s = merge(s, c.constraint(a, m))
			}
		}
	}
	return s
}

// minLength reads an open list's length, int & >=N.
func minLength(v cue.Value) (int, bool) {
	op, args := v.Len().Expr()
	if op != cue.AndOp {
		return 0, false
	}
	for _, a := range args {
		if aop, bound := a.Expr(); aop == cue.GreaterThanEqualOp && len(bound) == 1 {
			if n, err := bound[0].Int64(); err == nil {
				return int(n), true
			}
		}
	}
	return 0, false
}

// constraint converts a scalar constraint from its expression.
func (c *converter) constraint(v cue.Value, m mode) *Schema {
	if v.IsConcrete() && v.Err() == nil {
		if k := v.Kind(); k != cue.StructKind && k != cue.ListKind {
			return c.constant(v)
		}
	}
	op, args := v.Expr()
	switch op {
	case cue.NoOp:
		// A disjunction whose default another arm subsumes shows as
		// that arm alone.
		if len(args) == 1 {
			if aop, _ := args[0].Expr(); aop != cue.NoOp {
				return c.value(args[0], m)
			}
		}
		return kindSchema(v.IncompleteKind())
	case cue.AndOp:
		var all []*Schema
		for _, a := range args {
			all = append(all, c.value(a, m))
		}
		return merge(all...)
	case cue.OrOp:
		return c.disjunction(args, m)
	case cue.LessThanOp, cue.LessThanEqualOp, cue.GreaterThanOp, cue.GreaterThanEqualOp:
		return bound(op, args)
	case cue.NotEqualOp:
		if len(args) == 1 && args[0].IsConcrete() {
			if str, err := args[0].String(); err == nil && str == "" {
				one := 1
				return &Schema{Type: []string{"string"}, MinLength: &one}
			}
			return &Schema{Not: c.constant(args[0])}
		}
		return &Schema{}
	case cue.EqualOp:
		if len(args) == 1 && args[0].IsConcrete() {
			return c.constant(args[0])
		}
		return &Schema{}
	case cue.RegexMatchOp, cue.NotRegexMatchOp:
		re, err := args[0].String()
		if err != nil {
			return &Schema{Type: []string{"string"}}
		}
		if op == cue.NotRegexMatchOp {
			return &Schema{Type: []string{"string"}, Not: &Schema{Pattern: re}}
		}
		return &Schema{Type: []string{"string"}, Pattern: re}
	case cue.CallOp:
		return c.call(args)
	case cue.SelectorOp:
		// A builtin validator named without arguments.
		if name := fmt.Sprint(v); name == "time.Time" || name == "time.Time()" {
			return &Schema{Type: []string{"string"}, Format: "date-time"}
		}
		// A sibling field (a task's name defaults to its type): what
		// that field allows.
		if len(args) == 2 {
			if f, ok := fieldNamed(args[0], args[1]); ok && !c.following[f.Path().String()] {
				c.following[f.Path().String()] = true
				defer delete(c.following, f.Path().String())
				return c.value(f, m)
			}
		}
	}
	// References to other fields, interpolations, arithmetic: rules for
	// trainfn validate. Keep the kind, which holds whatever the value.
	return kindSchema(v.IncompleteKind())
}

// disjunction converts the arms of a|b|c, leaving out the arms that only
// make an error message (x | error("...")); constants become one enum.
func (c *converter) disjunction(arms []cue.Value, m mode) *Schema {
	var enum []json.RawMessage
	var others []*Schema
	for _, a := range arms {
		s := c.value(a, m)
		switch {
		case s.IsFalse():
		case s.IsTrue():
			return &Schema{}
		case isConstant(s):
			for _, e := range s.Enum {
				if !slices.ContainsFunc(enum, func(x json.RawMessage) bool { return string(x) == string(e) }) {
					enum = append(enum, e)
				}
			}
		default:
			others = append(others, s)
		}
	}
	if enum != nil {
		others = append([]*Schema{{Enum: enum}}, others...)
	}
	switch len(others) {
	case 0:
		return False()
	case 1:
		return others[0]
	}
	return &Schema{AnyOf: others}
}

// isConstant: an enum, perhaps with its type.
func isConstant(s *Schema) bool {
	c := *s
	c.Type, c.Format = nil, ""
	return c.Enum != nil && (Schema{Enum: c.Enum}).equal(&c)
}

func (s Schema) equal(o *Schema) bool {
	a, _ := json.Marshal(s.render(jsonSchema))
	b, _ := json.Marshal(o.render(jsonSchema))
	return string(a) == string(b)
}

func (c *converter) constant(v cue.Value) *Schema {
	b, err := v.MarshalJSON()
	if err != nil {
		return c.fail("%v: %v", v.Path(), err)
	}
	return &Schema{Enum: []json.RawMessage{b}}
}

// call converts the builtins the schemas use. An unknown one, or one whose
// arguments depend on other fields, accepts anything: trainfn validate
// checks it.
func (c *converter) call(args []cue.Value) *Schema {
	if len(args) == 0 {
		return &Schema{}
	}
	intArg := func() (int, bool) {
		if len(args) != 2 {
			return 0, false
		}
		n, err := args[1].Int64()
		return int(n), err == nil
	}
	switch fmt.Sprint(args[0]) {
	case "error", "error()":
		return False()
	case "strings.MaxRunes":
		if n, ok := intArg(); ok {
			return &Schema{Type: []string{"string"}, MaxLength: &n}
		}
	case "strings.MinRunes":
		if n, ok := intArg(); ok {
			return &Schema{Type: []string{"string"}, MinLength: &n}
		}
	case "list.MinItems":
		if n, ok := intArg(); ok {
			return &Schema{Type: []string{"array"}, MinItems: &n}
		}
	case "list.MaxItems":
		if n, ok := intArg(); ok {
			return &Schema{Type: []string{"array"}, MaxItems: &n}
		}
	case "time.Time":
		return &Schema{Type: []string{"string"}, Format: "date-time"}
	case "matchN":
		// matchN(1, [a, b]) is exactly one of them: Kubernetes'
		// IntOrString, as the schema generator writes it.
		if len(args) == 3 {
			if n, err := args[1].Int64(); err == nil && n == 1 {
				var arms []*Schema
				for i := 0; ; i++ {
					a := args[2].LookupPath(cue.MakePath(cue.Index(i)))
					if !a.Exists() {
						break
					}
					arms = append(arms, c.value(a, closed))
				}
				return &Schema{OneOf: arms}
			}
		}
	}
	return &Schema{}
}

// bound converts >=n and its kin. The bounds of int32 and int64 become
// their formats, as in Kubernetes' OpenAPI.
func bound(op cue.Op, args []cue.Value) *Schema {
	if len(args) != 1 {
		return &Schema{}
	}
	n, err := args[0].Float64()
	if err != nil {
		return &Schema{}
	}
	switch n {
	case math.MinInt32, math.MaxInt32:
		return &Schema{Type: []string{"integer"}, Format: "int32"}
	case math.MinInt64, math.MaxInt64:
		return &Schema{Type: []string{"integer"}, Format: "int64"}
	}
	integer := args[0].Kind() == cue.IntKind
	s := &Schema{Type: []string{"number"}}
	switch op {
	case cue.GreaterThanOp:
		if !integer {
			return s // no exclusive bounds: OpenAPI 3.0 writes them differently
		}
		n++
		fallthrough
	case cue.GreaterThanEqualOp:
		s.Minimum = &n
	case cue.LessThanOp:
		if !integer {
			return s
		}
		n--
		fallthrough
	case cue.LessThanEqualOp:
		s.Maximum = &n
	}
	return s
}

// kindSchema is what a CUE kind allows: a JSON type, or several.
func kindSchema(k cue.Kind) *Schema {
	switch k {
	case cue.BottomKind:
		// Not an error() the schema wrote (those are calls), but a rule
		// that cannot be decided before a document fills the fields it
		// reads: trainfn validate decides it.
		return &Schema{}
	case cue.TopKind:
		return &Schema{}
	case cue.NumberKind, cue.FloatKind:
		return &Schema{Type: []string{"number"}}
	}
	var arms []*Schema
	for _, one := range []struct {
		kind cue.Kind
		typ  string
	}{
		{cue.NullKind, "null"}, {cue.BoolKind, "boolean"}, {cue.IntKind, "integer"},
		{cue.FloatKind, "number"}, {cue.StringKind, "string"}, {cue.StructKind, "object"},
		{cue.ListKind, "array"}, {cue.BytesKind, "string"},
	} {
		if k&one.kind != 0 {
			arms = append(arms, &Schema{Type: []string{one.typ}})
		}
	}
	switch len(arms) {
	case 0:
		return &Schema{}
	case 1:
		return arms[0]
	}
	return &Schema{AnyOf: arms}
}

// defaultOf is a field's default, when it has a concrete scalar one.
func defaultOf(v cue.Value) json.RawMessage {
	d, ok := v.Default()
	if !ok || !d.IsConcrete() || d.Err() != nil {
		return nil
	}
	switch d.Kind() {
	case cue.StructKind, cue.ListKind:
		return nil
	}
	b, err := d.MarshalJSON()
	if err != nil {
		return nil
	}
	return b
}

// docText is a value's doc comments as prose: lines of a paragraph joined,
// paragraphs kept apart, each comment once.
func docText(v cue.Value) string {
	var paragraphs []string
	for _, cg := range v.Doc() {
		for _, p := range strings.Split(strings.TrimSpace(cg.Text()), "\n\n") {
			// "#MPIJob is ..." reads "MPIJob is ..." outside CUE.
			p = strings.TrimPrefix(strings.Join(strings.Fields(p), " "), "#")
			if p != "" && !slices.Contains(paragraphs, p) {
				paragraphs = append(paragraphs, p)
			}
		}
	}
	return strings.Join(paragraphs, "\n\n")
}
