// Package examples runs every example with the tool it is for and compares
// the result with the reviewed output in the example's .expected folder.
package examples

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/trainfn/trainfn/test/testtool"
)

var update = flag.Bool("update", false, "rewrite the examples' expected output; review the diff before committing it")

// workspace is a copy of examples/ beside a freshly built bin/trainfn, laid
// out as in the repository so the examples' relative exec paths resolve.
var workspace string

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := withWorkspace(m.Run)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func withWorkspace(run func() int) (int, error) {
	dir, err := os.MkdirTemp("", "trainfn-examples-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "trainfn"), "../cmd/trainfn")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return 0, fmt.Errorf("building trainfn: %w", err)
	}
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(".")); err != nil {
		return 0, err
	}
	workspace = dir
	return run(), nil
}

// kustomizations are the examples that build as they are.
var kustomizations = []string{"kustomize/transformer", "kustomize/generator"}

func TestKustomizeInProcess(t *testing.T) {
	for _, example := range kustomizations {
		t.Run(example, func(t *testing.T) {
			opts := krusty.MakeDefaultOptions()
			opts.PluginConfig = types.EnabledPluginConfig(types.BploLoadFromFileSys)
			opts.PluginConfig.FnpLoadingOptions.EnableExec = true
			resources, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), filepath.Join(workspace, "examples", example))
			require.NoError(t, err)
			out, err := resources.AsYaml()
			require.NoError(t, err)
			compareExpected(t, example, string(out))
		})
	}
}

func TestKustomizeBinary(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	for _, example := range kustomizations {
		t.Run(example, func(t *testing.T) {
			out, stderr, err := kustomizeBuild(kustomize, filepath.Join(workspace, "examples", example))
			require.NoError(t, err, stderr)
			compareExpected(t, example, out)
		})
	}
}

// TestKustomizeReportsBadSpecs breaks the job spec and expects the build to
// fail with trainfn's message, naming the file when kustomize passes it on.
func TestKustomizeReportsBadSpecs(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	dir := copyWorkspace(t)
	spec := filepath.Join(dir, "examples", "jobs", "pi.yaml")
	replaceInFile(t, spec, "slotsPerWorker:", "slotPerWorker:")
	kustomization := filepath.Join(dir, "examples", "kustomize", "transformer", "kustomization.yaml")
	replaceInFile(t, kustomization, "transformers:", "buildMetadata: [originAnnotations]\ntransformers:")

	out, stderr, err := kustomizeBuild(kustomize, filepath.Dir(kustomization))
	require.Error(t, err)
	assert.Empty(t, out)
	assert.Contains(t, stderr, `error: MPIJob pi: spec.slotPerWorker: Forbidden: unknown field (did you mean "slotsPerWorker"?)`)
	assert.Contains(t, stderr, "pi.yaml: error:", "with origin annotations kustomize tells trainfn the file")
}

// TestSSHKeyRecipe follows the README: make a key with ssh-keygen, let
// kustomize's secretGenerator turn it into the Secret the pods mount.
func TestSSHKeyRecipe(t *testing.T) {
	kustomize := testtool.Find(t, "kustomize")
	keygen := testtool.Find(t, "ssh-keygen")
	dir := filepath.Join(copyWorkspace(t), "examples", "kustomize", "ssh-key")
	gen := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "pi", "-f", "id")
	gen.Dir = dir
	require.NoError(t, gen.Run())

	out, stderr, err := kustomizeBuild(kustomize, dir)
	require.NoError(t, err, stderr)
	secret := document(t, out, "kind: Secret")
	assert.Contains(t, secret, "name: pi-ssh\n")
	assert.Contains(t, secret, "namespace: training\n")
	assert.Contains(t, secret, "type: kubernetes.io/ssh-auth")
	assert.Contains(t, secret, "ssh-privatekey: ")
	assert.Contains(t, secret, "ssh-publickey: ")
	assert.Contains(t, document(t, out, "name: pi-launcher\n  namespace"), "secretName: pi-ssh")
}

func kustomizeBuild(kustomize, dir string) (string, string, error) {
	cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// copyWorkspace gives a test a workspace of its own to change.
func copyWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(workspace)))
	// CopyFS drops the executable bit it cannot know about.
	require.NoError(t, os.Chmod(filepath.Join(dir, "bin", "trainfn"), 0o755))
	return dir
}

func replaceInFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
}

// document returns the one document of a stream that contains marker.
func document(t *testing.T, stream, marker string) string {
	t.Helper()
	var found []string
	for _, d := range strings.Split(stream, "\n---\n") {
		if strings.Contains(d, marker) {
			found = append(found, d)
		}
	}
	require.Len(t, found, 1, "documents containing %q", marker)
	return found[0]
}

func compareExpected(t *testing.T, example, got string) {
	t.Helper()
	path := filepath.Join(example, ".expected", "output.yaml")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no reviewed output yet: run make golden and review it")
	assert.Equal(t, string(want), got, "output differs from %s (if intended, run make golden and review the diff)", path)
}
