package export

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/schemas"
)

// LookupKind finds the kinds a name means: a kind alone (MPIJob: every
// version of it), group/version/kind (kubeflow.org/v2beta1/MPIJob) or
// kubectl's kind.version.group (MPIJob.v2beta1.kubeflow.org). Kinds match
// whatever their case.
func LookupKind(name string) ([]schemas.Kind, error) {
	var found []schemas.Kind
	for _, k := range allKinds() {
		group, version := resid.ParseGroupVersion(k.APIVersion)
		for _, form := range []string{k.Kind, k.APIVersion + "/" + k.Kind, k.Kind + "." + version + "." + group} {
			if strings.EqualFold(form, name) {
				found = append(found, k)
				break
			}
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no schema for %q: trainfn has schemas for %s", name, strings.Join(kindNames(), ", "))
	}
	SortKinds(found)
	return found, nil
}

// KindName is how LookupKind names one kind exactly: group/version/kind.
func KindName(k schemas.Kind) string { return k.APIVersion + "/" + k.Kind }

func kindNames() []string {
	kinds := allKinds()
	SortKinds(kinds)
	var names []string
	for _, k := range kinds {
		names = append(names, KindName(k))
	}
	return names
}

// allKinds are the kinds that have a schema: every kind trainfn expands,
// and its own config.
func allKinds() []schemas.Kind {
	kinds := []schemas.Kind{schemas.FunctionConfig}
	for _, k := range render.Kinds() {
		kinds = append(kinds, k.Kind)
	}
	return kinds
}

// schemaOf is where a kind's schema is.
func schemaOf(k schemas.Kind) (schemas.Schema, error) {
	if k == schemas.FunctionConfig {
		return schemas.For(k), nil
	}
	kind, ok := render.Lookup(k)
	if !ok {
		return schemas.Schema{}, fmt.Errorf("trainfn has no schema for %s", k)
	}
	return kind.Schema, nil
}
