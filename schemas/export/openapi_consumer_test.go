package export_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

// TestOpenAPIReadByKubernetes reads the OpenAPI document with Kubernetes'
// own OpenAPI 3 types (kube-openapi's spec3) and builds from its components
// the type converter the API server builds for server-side apply
// (managedfields.NewTypeConverter), which finds each kind's schema by its
// x-kubernetes-group-version-kind and resolves every $ref: a job trainfn
// accepts converts to a typed object, and a misspelt or mistyped field
// does not.
func TestOpenAPIReadByKubernetes(t *testing.T) {
	set, err := catalog.Build()
	require.NoError(t, err)
	b, err := set.OpenAPI("v9.9.9")
	require.NoError(t, err)
	var api spec3.OpenAPI
	require.NoError(t, json.Unmarshal(b, &api))
	converter, err := managedfields.NewTypeConverter(api.Components.Schemas, false)
	require.NoError(t, err)

	convert := func(t *testing.T, doc string) error {
		var data map[string]any
		require.NoError(t, yaml.MustParse(doc).YNode().Decode(&data))
		_, err := converter.ObjectToTyped(&unstructured.Unstructured{Object: data})
		return err
	}
	for _, spec := range []string{
		filepath.Join("..", "..", "examples", "jobs", "pi.yaml"),
		testtool.GoldenInput(t, "training-operator-pytorch-elastic-imagenet"),
		testtool.GoldenInput(t, "di-orchestrator-head-atari-dqn-dist"),
	} {
		b, err := os.ReadFile(spec)
		require.NoError(t, err)
		assert.NoError(t, convert(t, string(b)), spec)
	}

	pi, err := os.ReadFile(filepath.Join("..", "..", "examples", "jobs", "pi.yaml"))
	require.NoError(t, err)
	for broken, says := range map[string]string{
		strings.Replace(string(pi), "slotsPerWorker:", "slotPerWorker:", 1):        "slotPerWorker",
		strings.Replace(string(pi), "slotsPerWorker: 1", "slotsPerWorker: two", 1): "slotsPerWorker",
	} {
		err := convert(t, broken)
		require.Error(t, err)
		assert.Contains(t, err.Error(), says)
	}
}
