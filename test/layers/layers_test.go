package layers

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImportsPointDown reads every package's imports, with and without the
// e2e build tag, and holds each import of the module's own packages to the
// rules.
func TestImportsPointDown(t *testing.T) {
	type edge struct{ from, to string }
	edges := map[edge]bool{}
	for _, tags := range []string{"", "e2e"} {
		for _, p := range listPackages(t, tags) {
			for _, imp := range p.Imports {
				if imp == Module || strings.HasPrefix(imp, Module+"/") {
					edges[edge{relative(p.ImportPath), relative(imp)}] = true
				}
			}
		}
	}
	require.NotEmpty(t, edges, "no import of the module's own packages was read")
	for e := range edges {
		ok, reason := Allowed(e.from, e.to)
		assert.True(t, ok, "%s imports %s: %s", e.from, e.to, reason)
	}
}

func TestAllowed(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"render/mpijob", "schemas", true},
		{"render/mpijob", "render/handoff", true},
		{"render/mpijob", "functions", false},
		{"render/rendertest", "test/testtool", true},
		{"render/mpijob", "test/testtool", false},
		{"schemas/export", "render", false},
		{"render/handoff", "render/ynode", false},
		{"functions", "render", true},
		{"functions", "cmd/internal/cli", false},
		{"reconciler", "render/handoff", true},
		{"reconciler/diserver", "status/phase", true},
		{"reconciler", "status", false},
		{"reconciler", "render/mpi", false},
		{"reconciler", "functions", false},
		{"status", "render/handoff", true},
		{"status", "reconciler", false},
		{"changedjobs", "render/handoff", true},
		{"changedjobs", "functions", false},
		{"kubeclient", "status", false},
		{"cmd/trainfn", "functions", true},
		{"test/e2e", "reconciler", true},
		{"hack/bench/render", "test/jobstream", true},
	} {
		ok, reason := Allowed(c.from, c.to)
		assert.Equal(t, c.ok, ok, "%s imports %s", c.from, c.to)
		if !ok {
			assert.NotEmpty(t, reason)
		}
	}
}

// relative is a package's path within the module.
func relative(pkg string) string {
	return strings.TrimPrefix(strings.TrimPrefix(pkg, Module), "/")
}

type listedPackage struct {
	ImportPath string
	Imports    []string
}

// listPackages reads the imports of the module's packages, built with
// tags, as the go command would: the files build constraints leave out
// are left out, and test files are not read. It reads them in this process,
// so that go test, which caches a result until a file the test opened
// changes, runs it again when an import does.
func listPackages(t *testing.T, tags string) []listedPackage {
	t.Helper()
	root := moduleRoot(t)
	ctx := build.Default
	if tags != "" {
		ctx.BuildTags = append(ctx.BuildTags, tags)
	}
	var pkgs []listedPackage
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || isModule(path)) {
			return filepath.SkipDir
		}
		p, err := ctx.ImportDir(path, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, listedPackage{ImportPath: Module + "/" + filepath.ToSlash(rel), Imports: p.Imports})
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, pkgs)
	return pkgs
}

// moduleRoot is the folder of the module's go.mod, two above this one.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"))
	return root
}

// isModule tells whether a folder holds a module of its own (hack/tools'
// pins), which is no part of this one.
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}
