package functions

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
)

// IsJob reports whether a document is a job spec that trainfn expands.
func IsJob(n *yaml.RNode) bool {
	_, ok := render.Lookup(kindOf(n))
	return ok
}

// RendersJobs reports whether a document changes how the job specs beside
// it render: a TrainFn configuration, or a Kubeflow Trainer runtime that a
// TrainJob names.
func RendersJobs(n *yaml.RNode) bool {
	k := kindOf(n)
	return isConfig(n) || runtimes.IsRuntime(k.APIVersion, k.Kind)
}
