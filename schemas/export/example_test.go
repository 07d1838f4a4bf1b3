package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/schemas/export"
)

// A kind's JSON Schema carries the CUE schema's types, enums, defaults and
// doc comments.
func ExampleSet_JSONSchema() {
	catalog := export.NewCatalog(render.Kinds())
	kinds, _ := catalog.LookupKind("kubeflow.org/v2beta1/MPIJob")
	set, _ := catalog.Build(kinds...)
	b, _ := set.JSONSchema(kinds[0])
	var doc struct {
		Schema string `json:"$schema"`
		Title  string
		Defs   map[string]struct {
			Properties map[string]json.RawMessage
		} `json:"$defs"`
	}
	_ = json.Unmarshal(b, &doc)
	fmt.Println(doc.Schema)
	fmt.Println(doc.Title)
	var field bytes.Buffer
	_ = json.Compact(&field, doc.Defs["org.kubeflow.v2beta1.MPIJobSpec"].Properties["mpiImplementation"])
	fmt.Println(field.String())
	// Output:
	// https://json-schema.org/draft/2020-12/schema
	// MPIJob kubeflow.org/v2beta1
	// {"type":["string","null"],"enum":["OpenMPI","Intel","MPICH",null],"default":"OpenMPI"}
}

// Every kind's schema, laid out where kubeconform looks for it.
func ExampleSet_WriteKubeconform() {
	catalog := export.NewCatalog(render.Kinds())
	dir, _ := os.MkdirTemp("", "schemas-")
	defer func() { _ = os.RemoveAll(dir) }()
	set, _ := catalog.Build()
	written, _ := set.WriteKubeconform(dir)
	for _, path := range written {
		rel, _ := filepath.Rel(dir, path)
		fmt.Println(rel)
	}
	fmt.Println(export.KubeconformLocation("schemas"))
	// Output:
	// diengine.opendilab.org/dijob_v2alpha1.json
	// fn.trainfn.dev/trainfn_v1alpha1.json
	// kubeflow.org/mpijob_v1.json
	// kubeflow.org/pytorchjob_v1.json
	// kubeflow.org/mpijob_v1alpha1.json
	// kubeflow.org/mpijob_v1alpha2.json
	// kubeflow.org/mpijob_v2beta1.json
	// trainer.kubeflow.org/trainjob_v1alpha1.json
	// schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json
}

// A bare kind names every version of it.
func ExampleCatalog_LookupKind() {
	catalog := export.NewCatalog(render.Kinds())
	kinds, _ := catalog.LookupKind("mpijob")
	for _, k := range kinds {
		fmt.Println(export.KindName(k), export.SchemaName(k))
	}
	_, err := catalog.LookupKind("TFJob")
	fmt.Println(err)
	// Output:
	// kubeflow.org/v1/MPIJob org.kubeflow.v1.MPIJob
	// kubeflow.org/v1alpha1/MPIJob org.kubeflow.v1alpha1.MPIJob
	// kubeflow.org/v1alpha2/MPIJob org.kubeflow.v1alpha2.MPIJob
	// kubeflow.org/v2beta1/MPIJob org.kubeflow.v2beta1.MPIJob
	// no schema for "TFJob": trainfn has schemas for diengine.opendilab.org/v2alpha1/DIJob, fn.trainfn.dev/v1alpha1/TrainFn, kubeflow.org/v1/MPIJob, kubeflow.org/v1/PyTorchJob, kubeflow.org/v1alpha1/MPIJob, kubeflow.org/v1alpha2/MPIJob, kubeflow.org/v2beta1/MPIJob, trainer.kubeflow.org/v1alpha1/TrainJob
}
