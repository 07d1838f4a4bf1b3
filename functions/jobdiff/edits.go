package jobdiff

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// edit is one field of a job spec set, changed or removed: the smallest
// part of the spec that differs, a list as a whole when its length does.
type edit struct {
	path *field.Path
	// at are the keys (strings) and indexes (ints) that lead to the field.
	at []any
	// value is the new one; absent, the field is removed.
	value   any
	present bool
}

// editsBetween are the edits that make old into revised, in the order of the
// fields' paths.
func editsBetween(old, revised *yaml.RNode) ([]edit, error) {
	was, err := old.Map()
	if err != nil {
		return nil, err
	}
	is, err := revised.Map()
	if err != nil {
		return nil, err
	}
	var out []edit
	diff(was, is, nil, nil, &out)
	slices.SortFunc(out, func(a, b edit) int { return strings.Compare(a.path.String(), b.path.String()) })
	return out, nil
}

func diff(was, is any, path *field.Path, at []any, out *[]edit) {
	switch w := was.(type) {
	case map[string]any:
		if i, ok := is.(map[string]any); ok {
			for k, v := range w {
				nv, present := i[k]
				if !present {
					*out = append(*out, edit{path: child(path, k), at: with(at, k)})
					continue
				}
				diff(v, nv, child(path, k), with(at, k), out)
			}
			for k, v := range i {
				if _, present := w[k]; !present {
					*out = append(*out, edit{path: child(path, k), at: with(at, k), value: v, present: true})
				}
			}
			return
		}
	case []any:
		if i, ok := is.([]any); ok && len(i) == len(w) {
			for n := range w {
				diff(w[n], i[n], path.Index(n), with(at, n), out)
			}
			return
		}
	}
	if !reflect.DeepEqual(was, is) {
		*out = append(*out, edit{path: path, at: at, value: is, present: true})
	}
}

// child is path's field k: a key of the kind labels have, with dots or
// slashes, in brackets (metadata.labels[kueue.x-k8s.io/queue-name]).
func child(path *field.Path, k string) *field.Path {
	if path == nil {
		return field.NewPath(k)
	}
	if strings.ContainsAny(k, "./") {
		return path.Key(k)
	}
	return path.Child(k)
}

func with(at []any, k any) []any { return append(slices.Clip(at), k) }

// applyTo is a copy of spec with the edit made.
func (e edit) applyTo(spec map[string]any) map[string]any {
	out := deepCopy(spec).(map[string]any)
	var parent any = out
	for _, k := range e.at[:len(e.at)-1] {
		switch p := parent.(type) {
		case map[string]any:
			parent = p[k.(string)]
		case []any:
			parent = p[k.(int)]
		}
	}
	switch p := parent.(type) {
	case map[string]any:
		k := e.at[len(e.at)-1].(string)
		if e.present {
			p[k] = e.value
		} else {
			delete(p, k)
		}
	case []any:
		p[e.at[len(e.at)-1].(int)] = e.value
	}
	return out
}

// deepCopy copies what a YAML document decodes to.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
