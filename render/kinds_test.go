package render_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/test/testtool"
)

// Every kind in the table has a schema that compiles, and none is listed
// twice.
func TestEveryKindHasASchema(t *testing.T) {
	seen := map[schemas.Kind]bool{}
	for _, k := range render.Kinds() {
		assert.False(t, seen[k.Kind], "%s is listed twice", k.Kind)
		seen[k.Kind] = true
		def, err := schemas.Definition(k.Schema)
		require.NoError(t, err, k.Kind)
		require.NoError(t, def.Err(), k.Kind)
	}
}

// jobKind matches the kind line of a document of a kind in the table.
var jobKind = func() *regexp.Regexp {
	var names []string
	for _, k := range render.Kinds() {
		if !slices.Contains(names, k.Kind.Kind) {
			names = append(names, regexp.QuoteMeta(k.Kind.Kind))
		}
	}
	return regexp.MustCompile(`(?m)^kind: "?(` + strings.Join(names, "|") + `)"?\s*$`)
}()

// TestUpstreamCopies checks the golden cases copied from the operators'
// repositories, which each kind's package keeps, against the compatibility
// corpus, when it is at hand: every
// MPIJob (of each API version) and PyTorchJob example there has a case, and
// each copy is unchanged.
func TestUpstreamCopies(t *testing.T) {
	corpus := testtool.UpstreamCorpus(t)
	copies := map[string]string{}
	marks, err := filepath.Glob(filepath.Join("*", "testdata", "*", "*", "upstream.txt"))
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

// The reconciler knows a DIJob's workloads by their kind label: the name
// it looks for is the one the table labels them with.
func TestTheReconcilersDIJobKindIsInTheTable(t *testing.T) {
	var names []string
	for _, k := range render.Kinds() {
		names = append(names, k.Kind.Kind)
	}
	assert.Contains(t, names, handoff.DIJobKind)
}
