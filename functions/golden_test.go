package functions

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

var update = flag.Bool("update", false, "rewrite the expected files of the golden cases; review the diff before committing it")

// TestGolden renders every case under testdata/: input.yaml is the stream
// (or, with config.yaml, the items of a ResourceList whose function config
// is config.yaml); expected.yaml is what is printed, diagnostics.txt what is
// reported. A case that fails has no expected.yaml: nothing may be printed.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			output, diags := runCase(t, dir)
			compareGolden(t, filepath.Join(dir, "expected.yaml"), output)
			compareGolden(t, filepath.Join(dir, "diagnostics.txt"), diags)
		})
	}
}

// runCase renders a case as trainfn render (or, with config.yaml, as a KRM
// function) would, and returns what would be printed and reported.
func runCase(t *testing.T, dir string) (string, string) {
	docs, err := ReadDocuments([]string{filepath.Join(dir, "input.yaml")}, nil)
	require.NoError(t, err)
	for i := range docs {
		docs[i].Source.Path = "input.yaml"
	}

	var objects []*yaml.RNode
	var diags Diagnostics
	if config, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err == nil {
		rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(string(config))}
		for _, d := range docs {
			rl.Items = append(rl.Items, d.Node)
		}
		if diags = (Function{}).process(rl); !diags.HasErrors() {
			objects = rl.Items
		}
	} else {
		objects, diags = Expand(docs)
	}

	var out bytes.Buffer
	if objects != nil {
		require.NoError(t, WriteDocuments(&out, objects))
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

var jobKind = regexp.MustCompile(`(?m)^kind: "?(MPIJob|PyTorchJob|DIJob)"?\s*$`)

// TestUpstreamCopies checks the golden cases copied from the operators'
// repositories against the compatibility corpus, when it is at hand: every
// MPIJob (of each API version) and PyTorchJob example there has a case, and
// each copy is unchanged.
func TestUpstreamCopies(t *testing.T) {
	corpus := testtool.UpstreamCorpus(t)
	copies := map[string]string{}
	marks, err := filepath.Glob("../testdata/*/upstream.txt")
	require.NoError(t, err)
	for _, mark := range marks {
		b, err := os.ReadFile(mark)
		require.NoError(t, err)
		copies[strings.TrimSpace(string(b))] = filepath.Join(filepath.Dir(mark), "input.yaml")
	}
	var examples []string
	require.NoError(t, filepath.WalkDir(corpus, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && jobKind.Match(b) {
			examples = append(examples, path)
		}
		return err
	}))
	require.NotEmpty(t, examples)
	for _, example := range examples {
		rel, err := filepath.Rel(corpus, example)
		require.NoError(t, err)
		copied, ok := copies[filepath.ToSlash(rel)]
		if !assert.True(t, ok, "no golden case for %s", rel) {
			continue
		}
		want, err := os.ReadFile(example)
		require.NoError(t, err)
		got, err := os.ReadFile(copied)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%s differs from %s", copied, rel)
	}
}
