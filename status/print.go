package status

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"
)

// Format is how jobs are written out.
type Format string

const (
	// Table is kubectl's: one line per job, in aligned columns.
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

// WriteTable writes one line per job under kubectl's kind of header:
// NAMESPACE (when withNamespace) NAME KIND PHASE READY RESTARTS AGE. READY
// is the pods running and ready over those the job should have now; AGE
// is measured to now.
func WriteTable(w io.Writer, jobs []Job, withNamespace bool, now time.Time) error {
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
	if withNamespace {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprintln(tw, "NAME\tKIND\tPHASE\tREADY\tRESTARTS\tAGE")
	for _, j := range jobs {
		if withNamespace {
			fmt.Fprintf(tw, "%s\t", j.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%s\n", j.Name, j.Kind, j.Phase, j.Ready, j.Expected, j.Restarts, age(j, now))
	}
	return tw.Flush()
}

// age is how long ago the job was created, as kubectl writes it.
func age(j Job, now time.Time) string {
	if j.Created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(j.Created.Time))
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
