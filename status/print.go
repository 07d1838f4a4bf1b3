package status

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Format is how jobs are written out.
type Format string

const (
	// Table is kubectl's: one line per job, in aligned columns (see
	// TableOf).
	Table Format = "table"
	JSON  Format = "json"
	YAML  Format = "yaml"
)

// ParseFormat reads the -o flag.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Table, JSON, YAML:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q: want table, json or yaml", s)
}

// WriteDocument writes v, a Job or a JobList, as one JSON or YAML
// document.
func WriteDocument(w io.Writer, f Format, v any) error {
	switch f {
	case JSON:
		e := json.NewEncoder(w)
		e.SetIndent("", "    ")
		return e.Encode(v)
	case YAML:
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("format %q is no document format", f)
}

// NoneFound is what the table says instead when no job exists, as kubectl
// says it (to standard error).
func NoneFound(namespace string) string {
	if namespace == "" {
		return "No trainfn jobs found."
	}
	return fmt.Sprintf("No trainfn jobs found in %s namespace.", namespace)
}
