package export

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// Schema is one schema object, in the part of JSON Schema 2020-12 that
// OpenAPI 3.0 also has: one tree, converted from CUE once, is written in
// either dialect. Refs name an entry of the set's definitions.
type Schema struct {
	Ref         string
	Title       string
	Description string
	// Type is one or more JSON types; several only where CUE allows
	// several kinds (an int or a string).
	Type    []string
	Format  string
	Enum    []json.RawMessage
	Default json.RawMessage
	// Nullable says null is accepted too: a field set to null counts as
	// unset, as Kubernetes and trainfn read it.
	Nullable bool

	Properties map[string]*Schema
	Required   []string
	// AdditionalProperties nil allows any other property; False forbids
	// them (a closed CUE struct).
	AdditionalProperties *Schema
	Items                *Schema
	MinItems, MaxItems   *int

	Minimum, Maximum     *float64
	MinLength, MaxLength *int
	Pattern              string

	Not                 *Schema
	AllOf, AnyOf, OneOf []*Schema
	// If, Then and Else are JSON Schema's conditionals, which OpenAPI 3.0
	// lacks; the converter never makes them, tools composing schemas do.
	If, Then, Else *Schema

	// GroupVersionKinds is Kubernetes' x-kubernetes-group-version-kind:
	// the kinds a root schema describes.
	GroupVersionKinds []GroupVersionKind

	// never is the false schema, which nothing satisfies.
	never bool
}

// GroupVersionKind names a kind the way Kubernetes' OpenAPI extension does.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// False is the schema nothing satisfies.
func False() *Schema { return &Schema{never: true} }

// IsFalse reports whether nothing satisfies s.
func (s *Schema) IsFalse() bool { return s != nil && s.never }

// IsTrue reports whether s accepts every value.
func (s *Schema) IsTrue() bool {
	return s == nil || s.Ref == "" && len(s.Type) == 0 && s.Format == "" && s.Enum == nil && !s.never &&
		s.Properties == nil && s.Required == nil && s.AdditionalProperties == nil && s.Items == nil &&
		s.MinItems == nil && s.MaxItems == nil && s.Minimum == nil && s.Maximum == nil &&
		s.MinLength == nil && s.MaxLength == nil && s.Pattern == "" && s.Not == nil &&
		s.AllOf == nil && s.AnyOf == nil && s.OneOf == nil && s.If == nil && s.Then == nil && s.Else == nil
}

// Copy is a deep copy of s, for changing a shared schema in one place.
func (s *Schema) Copy() *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.Type = slices.Clone(s.Type)
	c.Enum = slices.Clone(s.Enum)
	c.Required = slices.Clone(s.Required)
	if s.Properties != nil {
		c.Properties = make(map[string]*Schema, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = p.Copy()
		}
	}
	c.AdditionalProperties = s.AdditionalProperties.Copy()
	c.Items = s.Items.Copy()
	c.Not = s.Not.Copy()
	c.If, c.Then, c.Else = s.If.Copy(), s.Then.Copy(), s.Else.Copy()
	c.AllOf = copyAll(s.AllOf)
	c.AnyOf = copyAll(s.AnyOf)
	c.OneOf = copyAll(s.OneOf)
	c.GroupVersionKinds = slices.Clone(s.GroupVersionKinds)
	return &c
}

func copyAll(list []*Schema) []*Schema {
	if list == nil {
		return nil
	}
	out := make([]*Schema, len(list))
	for i, s := range list {
		out[i] = s.Copy()
	}
	return out
}

// dialect is how a schema tree is written out.
type dialect int

const (
	// jsonSchema is JSON Schema draft 2020-12: nullable fields list null
	// among their types, refs point into $defs.
	jsonSchema dialect = iota
	// openAPI is OpenAPI 3.0's schema object: nullable is a keyword, a
	// $ref has no siblings, one type per schema.
	openAPI
)

func (d dialect) refPrefix() string {
	if d == openAPI {
		return "#/components/schemas/"
	}
	return "#/$defs/"
}

// object is a JSON object whose keys keep the order they were added in, so
// schemas read top-down: what a value is before how it is constrained.
type object []member

type member struct {
	key   string
	value any
}

func (o *object) set(key string, value any) { *o = append(*o, member{key, value}) }

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalValue(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalValue is json.Marshal leaving <, > and & as they are: schema
// descriptions are read by people.
func marshalValue(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// number writes a bound as JSON writes integers when it is one.
type number float64

func (n number) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(n), 'f', -1, 64)), nil
}

// render writes s in a dialect as a value encoding/json marshals.
func (s *Schema) render(d dialect) any {
	if s.never {
		if d == openAPI {
			// OpenAPI 3.0 has no boolean schemas.
			return object{{"not", object{}}}
		}
		return false
	}
	if s.Nullable && d == jsonSchema && s.Ref == "" && (s.AllOf != nil || s.AnyOf != nil || s.OneOf != nil ||
		s.Not != nil || s.If != nil || len(s.Type) == 0 && s.Enum == nil) {
		// Some keyword here may refuse null: accept null, or all of them.
		inner := *s
		inner.Nullable, inner.Title, inner.Description, inner.Default = false, "", "", nil
		var o object
		setDoc(&o, s)
		if s.Default != nil {
			o.set("default", s.Default)
		}
		arms := []any{object{{"type", "null"}}}
		rendered := inner.render(d)
		if o, _ := rendered.(object); len(o) == 1 && o[0].key == "anyOf" {
			// null or (a or b): null or a or b.
			arms = append(arms, o[0].value.([]any)...)
		} else {
			arms = append(arms, rendered)
		}
		o.set("anyOf", arms)
		return o
	}
	var o object
	setDoc(&o, s)
	if s.Ref != "" {
		ref := object{{"$ref", d.refPrefix() + s.Ref}}
		switch {
		case s.Nullable && d == jsonSchema:
			o.set("anyOf", []any{object{{"type", "null"}}, ref})
		case d == openAPI && (len(o) > 0 || s.Nullable || s.Default != nil):
			// OpenAPI 3.0 ignores whatever stands beside a $ref.
			o.set("allOf", []any{ref})
		default:
			o = append(o, ref...)
		}
		if s.Nullable && d == openAPI {
			o.set("nullable", true)
		}
		if s.Default != nil {
			o.set("default", s.Default)
		}
		return o
	}
	// What is left for JSON Schema's null is a type or an enum to extend.
	types, enum := s.Type, s.Enum
	if s.Nullable && d == jsonSchema && len(types) > 0 {
		types = append(slices.Clone(types), "null")
	}
	if s.Nullable && enum != nil {
		// OpenAPI 3.0.3 reads nullable as not widening an enum.
		enum = append(slices.Clone(enum), json.RawMessage("null"))
	}
	switch {
	case len(types) == 1:
		o.set("type", types[0])
	case len(types) > 1 && d == jsonSchema:
		o.set("type", types)
	case len(types) > 1:
		var anyOf []any
		for _, t := range types {
			anyOf = append(anyOf, object{{"type", t}})
		}
		o.set("anyOf", anyOf)
	}
	if s.Format != "" {
		o.set("format", s.Format)
	}
	if enum != nil {
		o.set("enum", enum)
	}
	if s.Default != nil {
		o.set("default", s.Default)
	}
	if s.Nullable && d == openAPI {
		o.set("nullable", true)
	}
	if s.Properties != nil {
		props := object{}
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			props.set(k, s.Properties[k].render(d))
		}
		o.set("properties", props)
	}
	if len(s.Required) > 0 {
		o.set("required", s.Required)
	}
	if s.AdditionalProperties != nil {
		if s.AdditionalProperties.never {
			o.set("additionalProperties", false)
		} else {
			o.set("additionalProperties", s.AdditionalProperties.render(d))
		}
	}
	if s.Items != nil {
		o.set("items", s.Items.render(d))
	}
	setInt(&o, "minItems", s.MinItems)
	setInt(&o, "maxItems", s.MaxItems)
	if s.Minimum != nil {
		o.set("minimum", number(*s.Minimum))
	}
	if s.Maximum != nil {
		o.set("maximum", number(*s.Maximum))
	}
	setInt(&o, "minLength", s.MinLength)
	setInt(&o, "maxLength", s.MaxLength)
	if s.Pattern != "" {
		o.set("pattern", s.Pattern)
	}
	if s.Not != nil {
		o.set("not", s.Not.render(d))
	}
	for _, c := range []struct {
		key  string
		list []*Schema
	}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		if c.list == nil {
			continue
		}
		var rendered []any
		for _, x := range c.list {
			rendered = append(rendered, x.render(d))
		}
		o.set(c.key, rendered)
	}
	for _, c := range []struct {
		key    string
		schema *Schema
	}{{"if", s.If}, {"then", s.Then}, {"else", s.Else}} {
		if c.schema != nil {
			o.set(c.key, c.schema.render(d))
		}
	}
	if s.GroupVersionKinds != nil {
		o.set("x-kubernetes-group-version-kind", s.GroupVersionKinds)
	}
	if d == openAPI && isIntOrString(s) {
		o.set("x-kubernetes-int-or-string", true)
	}
	return o
}

// isIntOrString is Kubernetes' IntOrString shape, which OpenAPI tools know
// by its extension.
func isIntOrString(s *Schema) bool {
	list := s.OneOf
	if list == nil {
		list = s.AnyOf
	}
	if len(list) != 2 {
		return false
	}
	var types []string
	for _, x := range list {
		if len(x.Type) != 1 || !x.IsTrue() && !onlyType(x) {
			return false
		}
		types = append(types, x.Type[0])
	}
	slices.Sort(types)
	return slices.Equal(types, []string{"integer", "string"})
}

func onlyType(s *Schema) bool {
	c := *s
	c.Type = nil
	return c.IsTrue()
}

func setDoc(o *object, s *Schema) {
	if s.Title != "" {
		o.set("title", s.Title)
	}
	if s.Description != "" {
		o.set("description", s.Description)
	}
}

func setInt(o *object, key string, n *int) {
	if n != nil {
		o.set(key, *n)
	}
}
