// Package waitfor reads `trainfn wait`'s --for, kubectl wait's:
// condition=TYPE[=VALUE] or jsonpath='{PATH}'[=VALUE], and tells whether a
// job's document meets it, or never will.
package waitfor

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
)

// For is one --for.
type For struct {
	raw string
	// condition is the condition type, when waiting for one; else path
	// is the JSONPath waited on.
	condition string
	path      *jsonpath.JSONPath
	// value is the condition's status (True when not given) or the
	// path's value ("" for any value).
	value string
}

func (f For) String() string { return f.raw }

// Parse reads a --for.
func Parse(s string) (For, error) {
	kind, rest, _ := strings.Cut(s, "=")
	switch kind {
	case "condition":
		cond, value, hasValue := strings.Cut(rest, "=")
		if cond == "" {
			return For{}, fmt.Errorf("--for=%s: name a condition, as condition=Succeeded", s)
		}
		if !hasValue {
			value = "True"
		}
		return For{raw: s, condition: cond, value: value}, nil
	case "jsonpath":
		expr, value := splitJSONPath(rest)
		if expr == "" {
			return For{}, fmt.Errorf("--for=%s: give a JSONPath expression, as jsonpath='{.status.phase}'=Running", s)
		}
		p := jsonpath.New("for")
		if err := p.Parse(expr); err != nil {
			return For{}, fmt.Errorf("--for=%s: %w", s, err)
		}
		return For{raw: s, path: p, value: value}, nil
	}
	return For{}, fmt.Errorf("--for=%s: want condition=TYPE[=VALUE] or jsonpath='{PATH}'[=VALUE]", s)
}

// splitJSONPath cuts {PATH}=VALUE after the expression's closing brace,
// since a filter inside it may hold an = of its own.
func splitJSONPath(s string) (expr, value string) {
	if i := strings.LastIndex(s, "}"); i >= 0 {
		expr, value = s[:i+1], s[i+1:]
		return expr, strings.TrimPrefix(value, "=")
	}
	return s, ""
}

// Met tells whether the job's document meets f: a condition of f's type
// with f's status (both in any case, as kubectl compares them), or the
// path's value equal to f's (any value when f names none).
func (f For) Met(doc *unstructured.Unstructured) (bool, error) {
	if f.path == nil {
		conditions, _, _ := unstructured.NestedSlice(doc.Object, "status", "conditions")
		for _, c := range conditions {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			typ, _ := m["type"].(string)
			st, _ := m["status"].(string)
			if strings.EqualFold(typ, f.condition) {
				return strings.EqualFold(st, f.value), nil
			}
		}
		return false, nil
	}
	results, err := f.path.FindResults(doc.Object)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		// Not there yet: a job without a completion time, say.
		return false, nil
	}
	if f.value == "" {
		return true, nil
	}
	if len(results[0]) > 1 {
		return false, fmt.Errorf("--for=%s: the path gives %d values; give one", f.raw, len(results[0]))
	}
	var buf bytes.Buffer
	if err := f.path.PrintResults(&buf, results[0]); err != nil {
		return false, err
	}
	return buf.String() == f.value, nil
}

// Never tells why a job's document can no longer meet f, "" while it can:
// the job has ended (phase Succeeded or Failed) and does not meet it, and
// an ended job changes no more unless it is edited.
func Never(doc *unstructured.Unstructured, met bool) string {
	if met {
		return ""
	}
	phase, _, _ := unstructured.NestedString(doc.Object, "status", "phase")
	if phase != "Succeeded" && phase != "Failed" {
		return ""
	}
	reason, _, _ := unstructured.NestedString(doc.Object, "status", "reason")
	message, _, _ := unstructured.NestedString(doc.Object, "status", "message")
	// The end's condition says it as the operators do: a Failed
	// condition's reason is the failing Job's (BackoffLimitExceeded, ...).
	conditions, _, _ := unstructured.NestedSlice(doc.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == phase {
			if r, _ := m["reason"].(string); r != "" {
				reason = r
			}
			if msg, _ := m["message"].(string); msg != "" {
				message = msg
			}
		}
	}
	why := "the job " + phase
	if reason != "" {
		why += " (" + reason + ")"
	}
	if message != "" {
		why += ": " + message
	}
	return why
}
