package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job whose apiVersion or kind is a typo fails render and validate,
// printing nothing, with the line to change and what it most likely meant:
// passed through, it would reach the cluster unexpanded.
func TestNearMissesFail(t *testing.T) {
	pi := readFile(t, testdata(t, "mpi-operator-pi"))
	require.Contains(t, pi, "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\n")
	for _, c := range []struct{ from, to, says string }{
		{"apiVersion: kubeflow.org/v2beta1", "apiVersion: kubeflow.com/v2beta1",
			`:1:13: error: MPIJob pi: apiVersion: Invalid value: "kubeflow.com/v2beta1": trainfn reads MPIJob of kubeflow.org/v2beta1, kubeflow.org/v1, kubeflow.org/v1alpha1 and kubeflow.org/v1alpha2 (did you mean "kubeflow.org/v2beta1"?)`},
		{"apiVersion: kubeflow.org/v2beta1", "apiVersion: kubeflow.org/v2",
			`:1:13: error: MPIJob pi: apiVersion: Invalid value: "kubeflow.org/v2": trainfn reads MPIJob of`},
		{"kind: MPIJob", "kind: MpiJob",
			`:2:7: error: MpiJob pi: kind: Invalid value: "MpiJob": kinds are case-sensitive (did you mean "MPIJob"?)`},
	} {
		path := writeFile(t, "pi.yaml", strings.Replace(pi, c.from, c.to, 1))
		for _, cmd := range []string{"render", "validate"} {
			r := trainfn("", cmd, path)
			assert.Equal(t, 1, r.code, "%s %s", cmd, c.to)
			assert.Empty(t, r.stdout, "%s %s", cmd, c.to)
			assert.Contains(t, r.stderr, path+c.says, "%s %s", cmd, c.to)
		}
	}
}

func TestStrictFailsOnWarnings(t *testing.T) {
	path := testdata(t, "run-policy")
	for _, cmd := range []string{"render", "validate"} {
		r := trainfn("", cmd, "--strict", path)
		assert.Equal(t, 1, r.code, cmd)
		assert.Empty(t, r.stdout, cmd)
		assert.Contains(t, r.stderr, "error: MPIJob bounded: spec.runPolicy.schedulingPolicy", "%s: the warning, as an error", cmd)
		assert.NotContains(t, r.stderr, "warning:", cmd)
	}
	out := filepath.Join(t.TempDir(), "deploy")
	r := trainfn("", "render", "--strict", "-o", out, path)
	assert.Equal(t, 1, r.code)
	assert.NoDirExists(t, out, "nothing is written")

	ok := trainfn("", "render", "--strict", testdata(t, "mpi-operator-pi"))
	assert.Equal(t, 0, ok.code, "a job with nothing to warn of renders: %s", ok.stderr)
	assert.NotEmpty(t, ok.stdout)
}

// `-o yaml` is kubectl's habit: render's -o is a directory to write into.
// A value that is one of kubectl's output formats is refused unless a
// directory of that name is there; any other directory is written.
func TestOutputFormatIsNotAnOutputDir(t *testing.T) {
	t.Chdir(t.TempDir())
	pi := testdata(t, "mpi-operator-pi")
	for _, format := range []string{"yaml", "json", "wide", "name", "jsonpath={.items[*].metadata.name}", "custom-columns=NAME:.metadata.name"} {
		r := trainfn("", "render", pi, "-o", format)
		assert.Equal(t, 2, r.code, format)
		assert.Empty(t, r.stdout, format)
		assert.Contains(t, r.stderr, "trainfn: -o "+format+": -o is --output-dir, the directory to write a kustomization into, not kubectl's output format", format)
		assert.Contains(t, r.stderr, "write -o ./"+format, format)
		assert.NoDirExists(t, format, format)
	}
	assert.Contains(t, trainfn("", "render", pi, "-oyaml").stderr, "render prints YAML to standard output without -o")

	for _, dir := range []string{"./yaml", "deploy"} {
		r := trainfn("", "render", pi, "-o", dir)
		require.Equal(t, 0, r.code, "%s: %s", dir, r.stderr)
		assert.FileExists(t, filepath.Join(dir, "kustomization.yaml"))
	}
	// yaml is now a directory render wrote: -o yaml names it.
	r := trainfn("", "render", pi, "-o", "yaml")
	assert.Equal(t, 0, r.code, r.stderr)
}

// A mistyped command is refused with the command it most likely meant.
func TestMistypedCommandsAreSuggested(t *testing.T) {
	for typed, meant := range map[string]string{"rendr": "render", "valdate": "validate", "shema": "schema"} {
		r := trainfn("", typed, "pi.yaml")
		assert.Equal(t, 2, r.code, typed)
		assert.Empty(t, r.stdout, typed)
		assert.Equal(t, `trainfn: unknown command "`+typed+`" for "trainfn" (did you mean `+meant+"?)\n", r.stderr)
	}
	r := trainfn("", "pi.yaml")
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "trainfn: unknown command \"pi.yaml\" for \"trainfn\"\n", r.stderr)
}
