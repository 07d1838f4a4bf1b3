package runtimes_test

import (
	"fmt"

	"github.com/trainfn/trainfn/render/trainjob/runtimes"
)

// A TrainingRuntime is found in its TrainJob's namespace only; a
// ClusterTrainingRuntime by its name alone.
func ExampleCatalog_Resolve() {
	catalog := runtimes.Catalog{
		{Kind: runtimes.ClusterTrainingRuntime, Name: "torch-distributed", Source: "runtimes/torch.yaml:15"},
		{Kind: runtimes.TrainingRuntime, Namespace: "team-a", Name: "shell", Source: "shell.yaml:1"},
	}
	for _, c := range []struct {
		ref       runtimes.Ref
		namespace string
	}{
		{runtimes.Ref{Name: "torch-distributed", APIGroup: runtimes.Group, Kind: runtimes.ClusterTrainingRuntime}, "anywhere"},
		{runtimes.Ref{Name: "shell", APIGroup: runtimes.Group, Kind: runtimes.TrainingRuntime}, "team-a"},
		{runtimes.Ref{Name: "shell", APIGroup: runtimes.Group, Kind: runtimes.TrainingRuntime}, "team-b"},
		{runtimes.Ref{Name: "shell", APIGroup: "example.com", Kind: runtimes.TrainingRuntime}, "team-a"},
	} {
		rt, err := catalog.Resolve(c.ref, c.namespace)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(rt.Source)
	}
	// Output:
	// runtimes/torch.yaml:15
	// shell.yaml:1
	// error: no TrainingRuntime shell in namespace "team-b" in the input; a TrainingRuntime is found only in its TrainJob's namespace, and the input has it in "team-a"
	// error: refers to TrainingRuntime shell of group "example.com": a TrainJob runs a ClusterTrainingRuntime or a TrainingRuntime of group trainer.kubeflow.org
}
