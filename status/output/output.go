// Package output writes jobs as kubectl writes objects, by its -o flag:
// a table (wide with more columns), their names, JSON, YAML, a JSONPath
// or a Go template, through cli-runtime's own printers.
package output

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/trainfn/trainfn/status"
)

// Formats are the -o values taken, as kubectl names them; the template
// formats take their template after an =.
var Formats = []string{"wide", "name", "json", "yaml", "jsonpath=", "jsonpath-as-json=", "jsonpath-file=", "go-template=", "go-template-file="}

// Printer writes jobs in one format.
type Printer struct {
	table   bool
	printer printers.ResourcePrinter
	// fresh makes the template formats' printer anew for each Print:
	// client-go's JSONPath keeps the state of a range it ran, and a
	// second object printed by the same one fails ("not in range,
	// nothing to end"), which `status -w` would hit at its second change.
	fresh func() (printers.ResourcePrinter, error)
	// Now is the clock the table's ages are measured on.
	Now func() time.Time
}

// New reads -o (and --no-headers, and whether namespaces are listed, for a
// table).
func New(format string, noHeaders, withNamespace bool) (*Printer, error) {
	p := &Printer{Now: time.Now}
	name, arg, hasArg := strings.Cut(format, "=")
	var err error
	switch {
	case format == "" || format == "wide":
		// One table printer for every Print, which writes the header
		// once: `status -w` prints rows under it as jobs change.
		p.table = true
		p.printer = printers.NewTablePrinter(printers.PrintOptions{Wide: format == "wide", NoHeaders: noHeaders, WithNamespace: withNamespace})
	case format == "name":
		p.printer = &printers.NamePrinter{}
	case format == "json":
		p.printer = &printers.JSONPrinter{}
	case format == "yaml":
		p.printer = &printers.YAMLPrinter{}
	case hasArg && (name == "jsonpath" || name == "jsonpath-as-json" || name == "jsonpath-file"):
		p.fresh = func() (printers.ResourcePrinter, error) { return jsonPath(name, arg) }
	case hasArg && (name == "go-template" || name == "go-template-file"):
		p.fresh = func() (printers.ResourcePrinter, error) { return goTemplate(name, arg) }
	default:
		return nil, fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(Formats, ", "))
	}
	if p.fresh != nil {
		// The template is read and parsed now, so that a bad one is a
		// mistake in the command line, before anything is listed.
		p.printer, err = p.fresh()
	}
	if err != nil {
		return nil, fmt.Errorf("output format %s: %w", name, err)
	}
	return p, nil
}

// IsTable tells whether the format is a table, which says "No jobs found"
// where the others write an empty list.
func (p *Printer) IsTable() bool { return p.table }

func jsonPath(format, arg string) (printers.ResourcePrinter, error) {
	template := arg
	if format == "jsonpath-file" {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, err
		}
		template = string(data)
	}
	p, err := printers.NewJSONPathPrinter(template)
	if err != nil {
		return nil, err
	}
	// As kubectl's --allow-missing-template-keys, true by default: a job
	// without a completion time prints nothing for it.
	p.AllowMissingKeys(true)
	p.EnableJSONOutput(format == "jsonpath-as-json")
	return p, nil
}

func goTemplate(format, arg string) (printers.ResourcePrinter, error) {
	template := []byte(arg)
	if format == "go-template-file" {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, err
		}
		template = data
	}
	p, err := printers.NewGoTemplatePrinter(template)
	if err != nil {
		return nil, err
	}
	p.AllowMissingKeys(true)
	return p, nil
}

// Print writes jobs: as a table's rows, or as documents (one job's
// document when one was asked for by name, else a List of them).
func (p *Printer) Print(w io.Writer, jobs []status.Job, one bool) error {
	if p.table {
		return p.printTable(w, jobs)
	}
	var obj runtime.Object
	var err error
	if one && len(jobs) == 1 {
		obj, err = status.Object(jobs[0])
	} else {
		obj, err = status.ListObject(jobs)
	}
	if err != nil {
		return err
	}
	printer := p.printer
	if p.fresh != nil {
		if printer, err = p.fresh(); err != nil {
			return err
		}
	}
	return printer.PrintObj(obj, w)
}

func (p *Printer) printTable(w io.Writer, jobs []status.Job) error {
	return p.printer.PrintObj(status.TableOf(jobs, p.Now()), w)
}
