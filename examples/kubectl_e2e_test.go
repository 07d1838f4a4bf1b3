//go:build e2e

package examples

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/test/testtool"
)

// kubectl is built by `make cluster-tools`, which only the end-to-end suite
// runs; hence the e2e build tag.

// TestKubectlKustomizeContainer builds the container examples with
// `kubectl kustomize` and trainfn's image, through the docker stand-in (see
// dockerShim): the output must be what kustomize itself builds. kubectl's
// kustomize runs container functions with --enable-alpha-plugins alone.
func TestKubectlKustomizeContainer(t *testing.T) {
	kubectl := testtool.Find(t, "kubectl")
	for example, execExample := range containerForms {
		t.Run(example, func(t *testing.T) {
			docker := standInDocker(t)
			out, stderr, err := run(docker.command(kubectl, "kustomize", "--enable-alpha-plugins",
				filepath.Join(workspace, "examples", example)))
			require.NoError(t, err, stderr)
			assert.Equal(t, [][]string{kustomizeDockerRun}, docker.calls(t))
			compareExpected(t, execExample, out)
		})
	}
}

// TestKubectlKustomizeSkipsExecFunctions pins why docs/kustomize.md sends kubectl
// users to the container form: kubectl's kustomize has no --enable-exec, and
// with --enable-alpha-plugins alone it skips exec functions without a word,
// so the job spec comes out unexpanded. If a kubectl release changes this,
// this test fails and the docs' advice must change with it.
func TestKubectlKustomizeSkipsExecFunctions(t *testing.T) {
	kubectl := testtool.Find(t, "kubectl")
	transformer := filepath.Join(workspace, "examples", "kustomize", "transformer")

	_, stderr, err := run(exec.Command(kubectl, "kustomize", "--enable-alpha-plugins", "--enable-exec", transformer))
	require.Error(t, err)
	assert.Contains(t, stderr, "unknown flag: --enable-exec")

	out, stderr, err := run(exec.Command(kubectl, "kustomize", "--enable-alpha-plugins", transformer))
	require.NoError(t, err, stderr)
	assert.Contains(t, document(t, out, "kind: MPIJob"), "name: pi\n", "the MPIJob passes through")
	assert.NotContains(t, out, "kind: Job\n", "trainfn did not run")

	out, stderr, err = run(exec.Command(kubectl, "kustomize", "--enable-alpha-plugins",
		filepath.Join(workspace, "examples", "kustomize", "generator")))
	require.NoError(t, err, stderr)
	assert.Empty(t, out, "the generator generates nothing")
}
