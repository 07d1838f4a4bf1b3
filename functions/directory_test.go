package functions

import (
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

func configMap(namespace, name string) *yaml.RNode {
	n := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: v\n")
	if namespace != "" {
		_ = n.SetNamespace(namespace)
	}
	return n
}

func TestWriteKustomizationLaysOutOneFilePerObject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	require.NoError(t, WriteKustomization(dir, []*yaml.RNode{configMap("", "b"), configMap("training", "a")}))

	assert.Equal(t, map[string]string{
		"kustomization.yaml": kustomizationMarker + `
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- configmap_b.yaml
- training/configmap_a.yaml
`,
		"configmap_b.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n",
		"training/configmap_a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: training\ndata:\n  k: v\n",
	}, testtool.Files(t, dir))
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no staging directory is left behind")
}

func TestWriteKustomizationReplacesItsOwnDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteKustomization(dir, []*yaml.RNode{configMap("", "old"), configMap("ns", "gone")}))
	require.NoError(t, WriteKustomization(dir, []*yaml.RNode{configMap("", "new")}))

	files := testtool.Files(t, dir)
	assert.Contains(t, files, "configmap_new.yaml")
	assert.NotContains(t, files, "configmap_old.yaml", "an object no longer rendered leaves the directory")
	assert.NotContains(t, files, "ns/configmap_gone.yaml")
	assert.NoDirExists(t, filepath.Join(dir, "ns"))
}

// TestWriteKustomizationLeavesNothingBeside: replacing a directory leaves
// no copy of it behind, and touches nothing else beside it.
func TestWriteKustomizationLeavesNothingBeside(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "deploy")
	require.NoError(t, WriteKustomization(dir, []*yaml.RNode{configMap("", "a")}))
	other := filepath.Join(parent, ".deploy.keep")
	require.NoError(t, os.WriteFile(other, []byte("mine"), 0o644))

	require.NoError(t, WriteKustomization(dir, []*yaml.RNode{configMap("", "b")}))
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"deploy", ".deploy.keep"}, names)
	assert.Equal(t, []string{"configmap_b.yaml", "kustomization.yaml"}, slices.Sorted(maps.Keys(testtool.Files(t, dir))))
}

// TestExchangeSwapsDirectories checks the one-step swap itself, which the
// fallback would otherwise hide: after it, each path holds the other's
// content.
func TestExchangeSwapsDirectories(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	require.NoError(t, os.MkdirAll(a, 0o755))
	require.NoError(t, os.MkdirAll(b, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(a, "from-a"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(b, "from-b"), nil, 0o644))
	if err := exchange(a, b); err != nil {
		if runtime.GOOS == "linux" {
			t.Fatalf("renameat2 RENAME_EXCHANGE: %v", err)
		}
		t.Skipf("no one-step swap here: %v", err)
	}
	assert.FileExists(t, filepath.Join(a, "from-b"))
	assert.FileExists(t, filepath.Join(b, "from-a"))
	assert.Error(t, exchange(a, filepath.Join(t.TempDir(), "missing")), "a missing path is not swapped")
}

func TestWriteKustomizationRefusesWhatItDidNotWrite(t *testing.T) {
	for name, prepare := range map[string]func(t *testing.T, dir string){
		"a foreign file": func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.md"), []byte("mine"), 0o644))
		},
		"a file beside trainfn's": func(t *testing.T, dir string) {
			require.NoError(t, WriteKustomization(dir, []*yaml.RNode{configMap("", "a")}))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "patch.yaml"), []byte("mine"), 0o644))
		},
		"a kustomization of someone else": func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: []\n"), 0o644))
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			prepare(t, dir)
			before := testtool.Files(t, dir)
			err := WriteKustomization(dir, []*yaml.RNode{configMap("", "new")})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "refusing to replace")
			assert.Equal(t, before, testtool.Files(t, dir), "nothing changed")
		})
	}
}

func TestWriteKustomizationRefusesUnwritableObjects(t *testing.T) {
	for name, tc := range map[string]struct {
		objects []*yaml.RNode
		message string
	}{
		"a name with a slash": {[]*yaml.RNode{configMap("", "a/b")}, "not a plain file name"},
		"a namespace upwards": {[]*yaml.RNode{configMap("..", "a")}, "not a plain file name"},
		"one file for two":    {[]*yaml.RNode{configMap("", "a"), configMap("", "a")}, "two objects would be written to configmap_a.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "deploy")
			err := WriteKustomization(dir, tc.objects)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.message)
			assert.NoDirExists(t, dir)
		})
	}
}

func TestWriteKustomizationRefusesWhatARenameCannotReplace(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "real")
	require.NoError(t, WriteKustomization(target, []*yaml.RNode{configMap("", "a")}))
	link := filepath.Join(root, "link")
	require.NoError(t, os.Symlink(target, link))
	file := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	t.Chdir(target)

	for dir, message := range map[string]string{
		link:    "is a symbolic link",
		file:    "is not a directory",
		".":     "is the working directory or holds it",
		root:    "is the working directory or holds it",
		"../..": "is the working directory or holds it",
	} {
		before := testtool.Files(t, root)
		err := WriteKustomization(dir, []*yaml.RNode{configMap("", "b")})
		require.Error(t, err, dir)
		assert.Contains(t, err.Error(), message, dir)
		assert.Equal(t, before, testtool.Files(t, root), "%s: nothing changed", dir)
	}
}

func TestRenderSkipsItsOwnOutputAmongInputs(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"), 0o644))
	require.NoError(t, WriteKustomization(filepath.Join(dir, "deploy"), []*yaml.RNode{configMap("", "a")}))

	docs, err := ReadDocuments([]string{dir}, nil)
	require.NoError(t, err)
	require.Len(t, docs, 1, "the rendered directory is not read back")
	assert.Equal(t, filepath.Join(dir, "a.yaml"), docs[0].Source.Path)
}
