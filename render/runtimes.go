package render

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/trainjob/runtimes"
	"github.com/trainfn/trainfn/schemas"
)

// RuntimeKinds are the kinds of Kubeflow Trainer's runtimes, which trainfn
// reads for the TrainJobs of the same input.
func RuntimeKinds() []schemas.Kind {
	return []schemas.Kind{
		{APIVersion: runtimes.APIVersion, Kind: runtimes.ClusterTrainingRuntime},
		{APIVersion: runtimes.APIVersion, Kind: runtimes.TrainingRuntime},
	}
}

// Runtime reads a Kubeflow Trainer runtime of the input (a TrainingRuntime
// or a ClusterTrainingRuntime), validated and defaulted, for the input's
// TrainJobs to resolve; source names where it was read. Runtimes are
// consumed by the render, not output.
func Runtime(doc *yaml.RNode, source string, v *schemas.Validator) (*runtimes.Runtime, schemas.Problems) {
	kind := schemas.Kind{APIVersion: doc.GetApiVersion(), Kind: doc.GetKind()}
	valid, problems := v.Validate(doc, schemas.For(kind))
	if problems != nil {
		return nil, problems
	}
	meta, err := doc.GetMeta()
	if err != nil {
		return nil, schemas.Problems{{Message: err.Error()}}
	}
	rt := &runtimes.Runtime{Kind: kind.Kind, Name: meta.Name, Labels: meta.Labels, Source: source}
	if kind.Kind == runtimes.TrainingRuntime {
		rt.Namespace = meta.Namespace
	}
	if err := valid.Decode("spec", &rt.Spec); err != nil {
		// The schema accepted what the model cannot read: a bug.
		return nil, schemas.Problems{{Field: "spec", Message: fmt.Sprintf("internal error: reading the defaulted spec: %v", err)}}
	}
	if errs := rt.WebhookErrors(); len(errs) > 0 {
		out := make(schemas.Problems, 0, len(errs))
		for _, e := range errs {
			out = append(out, schemas.FieldProblem(doc, e))
		}
		return nil, out
	}
	return rt, nil
}
