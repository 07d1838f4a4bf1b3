package export

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/trainfn/trainfn/schemas"
)

// Table is a table of kinds whose schemas can be exported; trainfn's table
// of the kinds it renders (render.Registry) is one. The exporter is handed
// it rather than knowing the kinds itself: the table lives above it.
type Table interface {
	// KindList are the table's kinds, in the table's order.
	KindList() []schemas.Kind
	// SchemaOf is a kind's schema; false when the table has no such kind.
	SchemaOf(schemas.Kind) (schemas.Schema, bool)
}

// Catalog is what can be exported: the schemas of a table's kinds, of
// trainfn's own config, TrainFn, and of the documents trainfn reads beside
// them (Kubeflow Trainer's runtimes).
type Catalog struct {
	table Table
	read  []schemas.Kind
}

// NewCatalog is the catalog of a table's kinds, trainfn's config and the
// kinds read, whose schemas are where schemas.For says.
func NewCatalog(t Table, read ...schemas.Kind) Catalog { return Catalog{table: t, read: read} }

// LookupKind finds the kinds a name means: a kind alone (MPIJob: every
// version of it), group/version/kind (kubeflow.org/v2beta1/MPIJob) or
// kubectl's kind.version.group (MPIJob.v2beta1.kubeflow.org). Kinds match
// whatever their case.
func (c Catalog) LookupKind(name string) ([]schemas.Kind, error) {
	var found []schemas.Kind
	for _, k := range c.kinds() {
		group, version := resid.ParseGroupVersion(k.APIVersion)
		for _, form := range []string{k.Kind, k.APIVersion + "/" + k.Kind, k.Kind + "." + version + "." + group} {
			if strings.EqualFold(form, name) {
				found = append(found, k)
				break
			}
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no schema for %q: trainfn has schemas for %s", name, strings.Join(c.kindNames(), ", "))
	}
	SortKinds(found)
	return found, nil
}

// KindName is how LookupKind names one kind exactly: group/version/kind.
func KindName(k schemas.Kind) string { return k.APIVersion + "/" + k.Kind }

func (c Catalog) kindNames() []string {
	kinds := c.kinds()
	SortKinds(kinds)
	var names []string
	for _, k := range kinds {
		names = append(names, KindName(k))
	}
	return names
}

// kinds are the kinds that have a schema: trainfn's config, every kind of
// the table, and the kinds read.
func (c Catalog) kinds() []schemas.Kind {
	return slices.Concat([]schemas.Kind{schemas.FunctionConfig}, c.jobKinds(), c.read)
}

// jobKinds are the table's kinds, in its order.
func (c Catalog) jobKinds() []schemas.Kind {
	if c.table == nil {
		return nil
	}
	return c.table.KindList()
}

// jobKindNames are the names of the table's kinds, each once, in the
// table's order: MPIJob, PyTorchJob, DIJob.
func (c Catalog) jobKindNames() []string {
	var names []string
	for _, k := range c.jobKinds() {
		if !slices.Contains(names, k.Kind) {
			names = append(names, k.Kind)
		}
	}
	return names
}

// schemaOf is where a kind's schema is.
func (c Catalog) schemaOf(k schemas.Kind) (schemas.Schema, error) {
	if k == schemas.FunctionConfig || slices.Contains(c.read, k) {
		return schemas.For(k), nil
	}
	if c.table != nil {
		if s, ok := c.table.SchemaOf(k); ok {
			return s, nil
		}
	}
	return schemas.Schema{}, fmt.Errorf("trainfn has no schema for %s", k)
}
