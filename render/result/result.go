// Package result holds what rendering a job gives back besides errors:
// the objects, and the warnings a user should read.
package result

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Output is what rendering one job spec produces.
type Output struct {
	Objects  []*yaml.RNode
	Warnings []Warning
}

// Warning is something a user should know about a spec that still renders.
type Warning struct {
	Field   *field.Path
	Message string
}
