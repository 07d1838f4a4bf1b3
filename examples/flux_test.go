package examples

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/kustomize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// fluxExample keeps its job specs in jobs/ and commits what trainfn renders
// from them in deploy/training, as its CI workflow does.
const fluxExample = "flux/render"

// TestFluxRenderedDirectoryIsCurrent renders the example's jobs as its CI
// workflow does and expects the committed directory, byte for byte: the
// check a pull request runs. With -update it rewrites the directory.
func TestFluxRenderedDirectoryIsCurrent(t *testing.T) {
	example := filepath.Join(workspace, "examples", fluxExample)
	out := filepath.Join(t.TempDir(), "training")
	if *update {
		var err error
		out, err = filepath.Abs(filepath.Join(fluxExample, "deploy", "training"))
		require.NoError(t, err)
	}
	fluxRender(t, example, out)
	if *update {
		return
	}
	assert.Equal(t, testtool.Files(t, filepath.Join(example, "deploy", "training")), testtool.Files(t, out),
		"deploy/training is not what jobs/ renders (if intended, run make golden and review the diff)")
}

// fluxRender renders the example's jobs into out as its CI workflow does,
// from the example's root.
func fluxRender(t *testing.T, root, out string) {
	t.Helper()
	render := exec.Command(filepath.Join(workspace, "bin", "trainfn"), "render", "jobs/", "--output-dir", out)
	render.Dir = root
	stderr, err := render.CombinedOutput()
	require.NoError(t, err, "%s", stderr)
}

// TestFluxBuildsTheRenderedDirectory builds the committed directory the way
// Flux's kustomize-controller does, with its own library: the example's
// Flux Kustomization (clusters/gitrepository.yaml) decides the path and the
// target namespace, the generator adds them to the kustomization, and the
// build runs with plugins disabled and no file outside the source.
func TestFluxBuildsTheRenderedDirectory(t *testing.T) {
	root := filepath.Join(copyWorkspace(t), "examples", fluxExample)
	ks := fluxKustomization(t, filepath.Join(root, "clusters", "gitrepository.yaml"))
	path, _, err := unstructured.NestedString(ks.Object, "spec", "path")
	require.NoError(t, err)
	dir := filepath.Join(root, path)
	if *update {
		// The committed directory may be rewritten by this same run.
		fluxRender(t, root, dir)
	}

	_, err = kustomize.NewGenerator(root, *ks).WriteFile(dir)
	require.NoError(t, err)
	resources, err := kustomize.SecureBuild(root, dir, false)
	require.NoError(t, err)
	out, err := resources.AsYaml()
	require.NoError(t, err)

	for _, r := range resources.Resources() {
		assert.Equal(t, "training", r.GetNamespace(), "%s %s is placed by targetNamespace", r.GetKind(), r.GetName())
	}
	compareExpected(t, fluxExample, string(out))
}

// TestFluxRefusesPlugins is why the Flux road renders ahead: the same build
// refuses a kustomization that runs trainfn as a plugin.
func TestFluxRefusesPlugins(t *testing.T) {
	root := filepath.Join(copyWorkspace(t), "examples")
	_, err := kustomize.SecureBuild(root, filepath.Join(root, "kustomize", "transformer"), false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "plugins")
}

func fluxKustomization(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	objs, err := cluster.ReadObjects(path)
	require.NoError(t, err)
	for _, o := range objs {
		if o.GetKind() == "Kustomization" && strings.HasPrefix(o.GetAPIVersion(), "kustomize.toolkit.fluxcd.io/") {
			return o
		}
	}
	t.Fatalf("%s holds no Flux Kustomization", path)
	return nil
}

// TestWorkflowsLint checks the example's GitHub Actions workflows, and the
// repository's own (the release), with actionlint: their syntax,
// expressions and permissions as GitHub reads them, the inputs of the
// actions it knows, and their run: scripts, with shellcheck (make tools
// installs it). None of them can run here.
func TestWorkflowsLint(t *testing.T) {
	actionlint := testtool.Find(t, "actionlint")
	examples, err := filepath.Glob(filepath.Join(fluxExample, "ci", "*.yaml"))
	require.NoError(t, err)
	require.Len(t, examples, 3)
	own, err := filepath.Glob(filepath.Join("..", ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	require.Len(t, own, 1)
	shellcheck := testtool.Find(t, "shellcheck")
	out, err := exec.Command(actionlint, append([]string{"-no-color", "-shellcheck", shellcheck}, append(examples, own...)...)...).CombinedOutput()
	assert.NoError(t, err, "%s", out)
}
