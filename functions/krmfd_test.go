package functions

// The committed definition is what trainfn schema writes for a development
// build; regenerate it with `go generate ./functions`.
//go:generate sh -c "go run ../cmd/trainfn schema -f krm-function-definition > krm-function-definition.yaml"

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/schemas/export"
	"github.com/trainfn/trainfn/test/testtool"
)

const functionDefinition = "krm-function-definition.yaml"

func TestKRMFunctionDefinitionIsGenerated(t *testing.T) {
	want, err := export.NewCatalog(render.Kinds()).KRMFunctionDefinition(export.FunctionImage("(devel)"))
	require.NoError(t, err)
	got, err := os.ReadFile(functionDefinition)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got),
		"%s is not what the CUE schema gives: run go generate ./functions and review the diff", functionDefinition)
}

// TestKRMFunctionDefinitionValidatesConfigs reads the committed definition
// the way kustomize's function framework does and checks TrainFn configs
// against the schema it holds, with the OpenAPI validator the framework
// uses for a function's config.
func TestKRMFunctionDefinitionValidatesConfigs(t *testing.T) {
	b, err := os.ReadFile(functionDefinition)
	require.NoError(t, err)
	var def framework.KRMFunctionDefinition
	require.NoError(t, k8syaml.UnmarshalStrict(b, &def), "every field is one kustomize's KRMFunctionDefinition knows")
	assert.Equal(t, "ghcr.io/trainfn/trainfn:latest", def.Spec.Versions[0].Runtime.Container.Image)
	assert.Equal(t, "trainfn", def.Spec.Versions[0].Runtime.Exec.Path)
	schema, err := framework.SchemaFromFunctionDefinition(resid.NewGvk("fn.trainfn.dev", "v1alpha1", "TrainFn"), string(b))
	require.NoError(t, err)

	check := func(doc string) error {
		node, err := yaml.Parse(doc)
		require.NoError(t, err)
		var data any
		require.NoError(t, node.YNode().Decode(&data))
		return validate.AgainstSchema(schema, data, strfmt.Default)
	}

	var good []string
	for _, c := range testtool.GoldenCases(t) {
		// An error case's config may be the error.
		if c.Config != nil && !strings.HasPrefix(filepath.Base(c.Dir), "error-") {
			good = append(good, filepath.Join(c.Dir, "config.yaml"))
		}
	}
	good = append(good, filepath.Join("..", "examples", "kustomize", "transformer", "trainfn.yaml"))
	configs := 0
	for _, path := range good {
		doc, err := os.ReadFile(path)
		require.NoError(t, err)
		if !strings.Contains(string(doc), "kind: TrainFn") {
			continue // a generator's config is the job spec itself
		}
		configs++
		assert.NoError(t, check(string(doc)), path)
	}
	assert.GreaterOrEqual(t, configs, 4)
	assert.NoError(t, check(`
apiVersion: fn.trainfn.dev/v1alpha1
kind: TrainFn
metadata:
  name: trainfn
  creationTimestamp: null
spec:
  strict: true
  mpi:
    launchMode: KubectlExec
    kubectlDeliveryImage: ""
  gangScheduling:
    scheduler: Volcano
    schedulerName: volcano
    queue: default
  di:
    serverURL: http://di-server.training:8082
`))

	for _, bad := range []struct{ spec, says string }{
		{"mpi: {launchmode: SSH}", "spec.mpi.launchmode in body is a forbidden property"},
		{"strict: yes", "spec.strict in body must be of type boolean"},
		{"mpi: {launchMode: Telepathy}", "spec.mpi.launchMode in body should be one of [SSH KubectlExec"},
		{"gangScheduling: {schedulerName: volcano}", "spec.gangScheduling.scheduler in body is required"},
		{"gangScheduling: {scheduler: Kueue, queue: 5}", "spec.gangScheduling.queue in body must be of type string"},
		{"di: {serverURL: ftp://server}", "spec.di.serverURL in body should match"},
		{`gangScheduling: {scheduler: Kubernetes, kubernetesVersion: "1.36"}`, "spec.gangScheduling.kubernetesVersion in body should be one of [1.37"},
	} {
		err := check("apiVersion: fn.trainfn.dev/v1alpha1\nkind: TrainFn\nmetadata: {name: bad}\nspec: {" + bad.spec + "}\n")
		if assert.Error(t, err, bad.spec) {
			assert.Contains(t, err.Error(), bad.says, bad.spec)
		}
	}
}
