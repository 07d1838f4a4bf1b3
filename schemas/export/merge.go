package export

import (
	"encoding/json"
	"slices"
)

// merge is the conjunction of schemas, folded into one schema object where
// their keywords combine (types intersect, bounds tighten) and kept as
// allOf where they do not.
func merge(all ...*Schema) *Schema {
	out := &Schema{}
	var rest []*Schema
	for _, s := range all {
		switch {
		case s.IsFalse():
			return False()
		case s.IsTrue():
			continue
		}
		if m, ok := mergeTwo(out, s); ok {
			out = m
		} else {
			rest = append(rest, s)
		}
	}
	if out.IsFalse() {
		return out
	}
	if rest == nil {
		return out
	}
	if out.IsTrue() && len(rest) == 1 {
		return rest[0]
	}
	if !out.IsTrue() {
		rest = append([]*Schema{out}, rest...)
	}
	return &Schema{AllOf: rest}
}

// mergeTwo combines b into a copy of a, or reports that one of their
// keywords conflicts.
func mergeTwo(a, b *Schema) (*Schema, bool) {
	if a.Ref != "" || b.Ref != "" || a.Properties != nil && b.Properties != nil ||
		a.Items != nil && b.Items != nil || a.AdditionalProperties != nil && b.AdditionalProperties != nil ||
		a.Not != nil && b.Not != nil || a.Pattern != "" && b.Pattern != "" && a.Pattern != b.Pattern ||
		a.AllOf != nil && b.AllOf != nil || a.AnyOf != nil && b.AnyOf != nil || a.OneOf != nil && b.OneOf != nil ||
		a.If != nil || b.If != nil {
		return nil, false
	}
	m := a.Copy()
	if b.Type != nil {
		if m.Type == nil {
			m.Type = slices.Clone(b.Type)
		} else {
			m.Type = intersectTypes(m.Type, b.Type)
			if len(m.Type) == 0 {
				return False(), true
			}
		}
	}
	switch {
	case b.Format == "" || b.Format == m.Format:
	case m.Format == "":
		m.Format = b.Format
	case m.Format == "int64" && b.Format == "int32":
		m.Format = "int32"
	case m.Format == "int32" && b.Format == "int64":
	default:
		return nil, false
	}
	if b.Enum != nil {
		if m.Enum == nil {
			m.Enum = slices.Clone(b.Enum)
		} else {
			m.Enum = slices.DeleteFunc(m.Enum, func(x json.RawMessage) bool {
				return !slices.ContainsFunc(b.Enum, func(y json.RawMessage) bool { return string(x) == string(y) })
			})
			if len(m.Enum) == 0 {
				return False(), true
			}
		}
	}
	if b.Default != nil {
		m.Default = b.Default
	}
	if b.Pattern != "" {
		m.Pattern = b.Pattern
	}
	m.Minimum = tighter(m.Minimum, b.Minimum, true)
	m.Maximum = tighter(m.Maximum, b.Maximum, false)
	m.MinLength = tighter(m.MinLength, b.MinLength, true)
	m.MaxLength = tighter(m.MaxLength, b.MaxLength, false)
	m.MinItems = tighter(m.MinItems, b.MinItems, true)
	m.MaxItems = tighter(m.MaxItems, b.MaxItems, false)
	if b.Properties != nil {
		m.Properties = b.Copy().Properties
	}
	m.Required = append(m.Required, b.Required...)
	slices.Sort(m.Required)
	m.Required = slices.Compact(m.Required)
	m.AdditionalProperties = first(m.AdditionalProperties, b.AdditionalProperties.Copy())
	m.Items = first(m.Items, b.Items.Copy())
	m.Not = first(m.Not, b.Not.Copy())
	m.AllOf = firstList(m.AllOf, copyAll(b.AllOf))
	m.AnyOf = firstList(m.AnyOf, copyAll(b.AnyOf))
	m.OneOf = firstList(m.OneOf, copyAll(b.OneOf))
	if b.Description != "" && m.Description == "" {
		m.Description = b.Description
	}
	m.Nullable = m.Nullable && b.Nullable
	return m, true
}

func intersectTypes(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			switch {
			case x == y:
				out = append(out, x)
			case x == "number" && y == "integer", x == "integer" && y == "number":
				out = append(out, "integer")
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// tighter is the stricter of two bounds: the larger of two lower bounds,
// the smaller of two upper ones.
func tighter[T int | float64](a, b *T, lower bool) *T {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	v := min(*a, *b)
	if lower {
		v = max(*a, *b)
	}
	return &v
}

func first(a, b *Schema) *Schema {
	if a != nil {
		return a
	}
	return b
}

func firstList(a, b []*Schema) []*Schema {
	if a != nil {
		return a
	}
	return b
}
