// Package functionstest runs golden cases through trainfn's front end, as
// users run trainfn: a case's input is read, configured, expanded and
// written by package functions, and what would be printed and reported is
// compared with the case's expected files. Each kind's package keeps its
// own cases and runs them with Golden; package functions runs its own.
package functionstest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/functions"
)

var update = flag.Bool("update", false, "rewrite the expected files of the golden cases; review the diff before committing it")

// Golden renders every case under root, a folder of cases or of versions
// of cases: input.yaml is the stream (or, with config.yaml, the items of a
// ResourceList whose function config is config.yaml); expected.yaml is
// what is printed, diagnostics.txt what is reported. A case that fails has
// no expected.yaml: nothing may be printed. Cases run as users run
// trainfn, through the front end.
func Golden(t *testing.T, root string) {
	var dirs []string
	for _, pattern := range []string{"*", filepath.Join("*", "*")} {
		inputs, err := filepath.Glob(filepath.Join(root, pattern, "input.yaml"))
		require.NoError(t, err)
		for _, input := range inputs {
			dirs = append(dirs, filepath.Dir(input))
		}
	}
	require.NotEmpty(t, dirs, "no golden case under %s", root)
	for _, dir := range dirs {
		name, err := filepath.Rel(root, dir)
		require.NoError(t, err)
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			output, diags := RunCase(t, dir)
			compareGolden(t, filepath.Join(dir, "expected.yaml"), output)
			compareGolden(t, filepath.Join(dir, "diagnostics.txt"), diags)
		})
	}
}

// RunCase renders a case as trainfn render (or, with config.yaml, as a KRM
// function) would, and returns what would be printed and reported.
func RunCase(t testing.TB, dir string) (string, string) {
	t.Helper()
	docs, err := functions.ReadDocuments([]string{filepath.Join(dir, "input.yaml")}, nil)
	require.NoError(t, err)
	for i := range docs {
		docs[i].Source.Path = "input.yaml"
	}

	var objects []*yaml.RNode
	var diags functions.Diagnostics
	if config, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err == nil {
		rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(string(config))}
		for _, d := range docs {
			rl.Items = append(rl.Items, d.Node)
		}
		if diags = (functions.Function{}).Diagnose(rl); !diags.HasErrors() {
			objects = rl.Items
		}
	} else {
		objects, diags = functions.Expand(docs)
	}

	var out bytes.Buffer
	if objects != nil {
		require.NoError(t, functions.WriteDocuments(&out, objects))
	}
	report := ""
	if len(diags) > 0 {
		report = diags.Error() + "\n"
	}
	if diags.HasErrors() {
		require.Empty(t, out.String(), "a failed render prints nothing")
	}
	return out.String(), report
}

// compareGolden checks got against a file; an empty got means the file
// must not exist.
func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if got == "" {
			require.NoError(t, removeIfPresent(path))
		} else {
			require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		}
		return
	}
	want, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		require.Empty(t, got, "%s does not exist, yet there is output (run make golden and review it)", path)
		return
	}
	require.NoError(t, err)
	require.Equal(t, string(want), got, "output differs from %s (if the change is intended, run make golden and review the diff)", path)
}

func removeIfPresent(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
