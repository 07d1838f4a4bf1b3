package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestSchemaPrintsOneKindsJSONSchema(t *testing.T) {
	r := trainfn("", "schema", "kubeflow.org/v2beta1/MPIJob")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	var doc struct {
		Schema   string         `json:"$schema"`
		Title    string         `json:"title"`
		Required []string       `json:"required"`
		Defs     map[string]any `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc.Schema)
	assert.Equal(t, "MPIJob kubeflow.org/v2beta1", doc.Title)
	assert.Equal(t, []string{"apiVersion", "kind", "metadata", "spec"}, doc.Required)
	assert.Contains(t, doc.Defs, "io.k8s.api.core.v1.Volume", "the pod template's types come along")

	for _, name := range []string{"MPIJob.v2beta1.kubeflow.org", "KUBEFLOW.ORG/V2BETA1/MPIJOB"} {
		same := trainfn("", "schema", name)
		assert.Equal(t, r, same, "%s names the same kind", name)
	}
	assert.Equal(t, r, trainfn("", "schema", "MPIJob.v2beta1.kubeflow.org", "kubeflow.org/v2beta1/MPIJob"),
		"a kind named twice is one kind")
	assert.Equal(t, r, trainfn("", "schema", "kubeflow.org/v2beta1/MPIJob"), "the same bytes every time")
}

func TestSchemaUnknownKind(t *testing.T) {
	r := trainfn("", "schema", "TFJob")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Equal(t, `trainfn: no schema for "TFJob": trainfn has schemas for diengine.opendilab.org/v2alpha1/DIJob, `+
		`fn.trainfn.dev/v1alpha1/TrainFn, kubeflow.org/v1/MPIJob, kubeflow.org/v1/PyTorchJob, `+
		"kubeflow.org/v1alpha1/MPIJob, kubeflow.org/v1alpha2/MPIJob, kubeflow.org/v2beta1/MPIJob, "+
		"trainer.kubeflow.org/v1alpha1/ClusterTrainingRuntime, trainer.kubeflow.org/v1alpha1/TrainJob, trainer.kubeflow.org/v1alpha1/TrainingRuntime\n", r.stderr)
}

func TestSchemaNeedsOneKindForStandardOutput(t *testing.T) {
	r := trainfn("", "schema", "MPIJob")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "names 4 kinds (kubeflow.org/v1/MPIJob, kubeflow.org/v1alpha1/MPIJob, kubeflow.org/v1alpha2/MPIJob, kubeflow.org/v2beta1/MPIJob): name one, or write them all with -o DIR")

	r = trainfn("", "schema")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "name the kind whose JSON Schema to print, or write every kind's with -o DIR")
}

func TestSchemaWritesKubeconformLayout(t *testing.T) {
	dir := t.TempDir()
	r := trainfn("", "schema", "-o", dir)
	require.Equal(t, 0, r.code, r.stderr)
	want := []string{
		"diengine.opendilab.org/dijob_v2alpha1.json",
		"fn.trainfn.dev/trainfn_v1alpha1.json",
		"kubeflow.org/mpijob_v1.json",
		"kubeflow.org/pytorchjob_v1.json",
		"kubeflow.org/mpijob_v1alpha1.json",
		"kubeflow.org/mpijob_v1alpha2.json",
		"kubeflow.org/mpijob_v2beta1.json",
		"trainer.kubeflow.org/clustertrainingruntime_v1alpha1.json",
		"trainer.kubeflow.org/trainjob_v1alpha1.json",
		"trainer.kubeflow.org/trainingruntime_v1alpha1.json",
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		rel, err := filepath.Rel(dir, line)
		require.NoError(t, err)
		listed = append(listed, filepath.ToSlash(rel))
	}
	assert.Equal(t, want, listed, "it lists what it wrote")
	for _, rel := range want {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(t, err)
		assert.True(t, json.Valid(b), rel)
	}
	one := trainfn("", "schema", "kubeflow.org/v2beta1/MPIJob")
	written, err := os.ReadFile(filepath.Join(dir, "kubeflow.org", "mpijob_v2beta1.json"))
	require.NoError(t, err)
	assert.Equal(t, one.stdout, string(written), "a file holds what standard output would")

	only := t.TempDir()
	r = trainfn("", "schema", "-o", only, "PyTorchJob")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, filepath.Join(only, "kubeflow.org", "pytorchjob_v1.json")+"\n", r.stdout)
}

// openAPIKinds are the kinds among an OpenAPI document's schemas.
func openAPIKinds(t *testing.T, out string) []string {
	t.Helper()
	var doc struct {
		OpenAPI    string `json:"openapi"`
		Components struct {
			Schemas map[string]struct {
				GVK []any `json:"x-kubernetes-group-version-kind"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, "3.0.3", doc.OpenAPI)
	var kinds []string
	for name, s := range doc.Components.Schemas {
		if s.GVK != nil {
			kinds = append(kinds, name)
		}
	}
	slices.Sort(kinds)
	return kinds
}

func TestSchemaOpenAPI(t *testing.T) {
	r := trainfn("", "schema", "-f", "openapi")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"dev.trainfn.fn.v1alpha1.TrainFn", "org.kubeflow.trainer.v1alpha1.ClusterTrainingRuntime", "org.kubeflow.trainer.v1alpha1.TrainJob",
		"org.kubeflow.trainer.v1alpha1.TrainingRuntime", "org.kubeflow.v1.MPIJob", "org.kubeflow.v1.PyTorchJob",
		"org.kubeflow.v1alpha1.MPIJob", "org.kubeflow.v1alpha2.MPIJob", "org.kubeflow.v2beta1.MPIJob", "org.opendilab.diengine.v2alpha1.DIJob"},
		openAPIKinds(t, r.stdout))

	r = trainfn("", "schema", "-f", "openapi", "DIJob")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{"org.opendilab.diengine.v2alpha1.DIJob"}, openAPIKinds(t, r.stdout), "only the kinds named")
}

func TestSchemaKRMFunctionDefinition(t *testing.T) {
	r := trainfn("", "schema", "-f", "krm-function-definition", "--image", "registry.example/trainfn:v1.2.3")
	require.Equal(t, 0, r.code, r.stderr)
	def, err := yaml.Parse(r.stdout)
	require.NoError(t, err)
	assert.Equal(t, "KRMFunctionDefinition", def.GetKind())
	image, err := def.Pipe(yaml.Lookup("spec", "versions", "[name=v1alpha1]", "runtime", "container", "image"))
	require.NoError(t, err)
	require.NotNil(t, image)
	assert.Equal(t, "registry.example/trainfn:v1.2.3", yaml.GetValue(image))

	r = trainfn("", "schema", "-f", "krm-function-definition")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "image: ghcr.io/trainfn/trainfn:latest\n", "a development build names the latest image")
}

func TestSchemaUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"-f", "yaml", "MPIJob"}, `unknown format "yaml"`},
		{[]string{"-f", "openapi", "-o", "dir"}, "-o writes JSON Schema files"},
		{[]string{"--image", "x", "DIJob"}, "--image is for -f krm-function-definition"},
		{[]string{"-f", "krm-function-definition", "MPIJob"}, "takes no kind"},
		{[]string{"--no-such-flag"}, "unknown flag"},
	} {
		r := trainfn("", append([]string{"schema"}, tc.args...)...)
		assert.Equal(t, 2, r.code, tc.args)
		assert.Empty(t, r.stdout, tc.args)
		assert.Contains(t, r.stderr, tc.says, tc.args)
	}
}
