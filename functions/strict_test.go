package functions

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// passedThrough is a stream whose only diagnostic is a warning: a TFJob
// passes through for its operator.
const passedThrough = `apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: tf
spec: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
`

const strictConfig = `apiVersion: fn.trainfn.dev/v1alpha1
kind: TrainFn
metadata:
  name: trainfn
spec:
  strict: true
`

const warning = "TFJob tf: passed through unchanged: trainfn does not expand kubeflow.org/v1 TFJob"

// A strict run fails on a warning as on an error: the warning is reported
// as an error and nothing is output. A run that is not strict outputs, and
// warns.
func TestStrictTurnsWarningsIntoErrors(t *testing.T) {
	out, diags := renderText(t, passedThrough)
	assert.NotEmpty(t, out)
	assert.Equal(t, "<stdin>:1: warning: "+warning, diags.Error())

	for name, run := range map[string]func() Diagnostics{
		"the TrainFn of the stream": func() Diagnostics {
			out, diags := renderText(t, strictConfig+"---\n"+passedThrough)
			assert.Empty(t, out)
			return diags
		},
		"the command line's --strict": func() Diagnostics {
			objects, diags, err := ExpandFiles([]string{Stdin}, strings.NewReader(passedThrough), Flags{Strict: true})
			require.NoError(t, err)
			assert.Nil(t, objects)
			return diags
		},
		"the function config": func() Diagnostics {
			docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(passedThrough))
			require.NoError(t, err)
			rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(strictConfig)}
			for _, d := range docs {
				rl.Items = append(rl.Items, d.Node)
			}
			err = Function{}.Process(rl)
			require.Error(t, err, "kustomize, kpt and Argo CD fail the build")
			require.Len(t, rl.Results, 1)
			assert.Equal(t, framework.Error, rl.Results[0].Severity)
			assert.Len(t, rl.Items, 2, "the items are left as they came")
			var diags Diagnostics
			require.ErrorAs(t, err, &diags)
			return diags
		},
	} {
		diags := run()
		require.Len(t, diags, 1, name)
		d := diags[0]
		assert.Equal(t, Error, d.Severity, name)
		assert.Contains(t, d.String(), "error: "+warning, name)
	}
}

// spec.strict is false unless said, and a run with nothing to warn of is
// no different when strict.
func TestStrictRunWithoutWarnings(t *testing.T) {
	config := strings.Replace(strictConfig, "strict: true", "strict: false", 1)
	out, diags := renderText(t, config+"---\n"+passedThrough)
	assert.NotEmpty(t, out)
	require.Len(t, diags, 1)
	assert.Equal(t, Warning, diags[0].Severity)

	quiet := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
	out, diags = renderText(t, strictConfig+"---\n"+quiet)
	assert.Empty(t, diags)
	assert.Equal(t, quiet, out)
}
