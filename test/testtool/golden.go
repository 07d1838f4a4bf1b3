package testtool

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// GoldenCase is a golden case: the stream trainfn render reads and, for a
// case run as a KRM function, its function config.
type GoldenCase struct {
	// Name is the case's folder under its package's testdata:
	// <version>/<case> for a kind's, prefixed by the kind's package
	// (mpijob/v2beta1/mpi-operator-pi), or the front end's <case>.
	Name string
	// Dir is the case's folder.
	Dir   string
	Input []byte
	// Config is nil when the case has no config.yaml.
	Config []byte
}

// goldenRoots are where golden cases live: each kind's package keeps its
// own, by version (render/<kind>/testdata/<version>/<case>), and the front
// end the few that are about streams and the KRM function
// (functions/testdata/<case>).
var goldenRoots = []string{
	filepath.Join("render", "*", "testdata", "*", "*"),
	filepath.Join("functions", "testdata", "*"),
}

// GoldenDirs are the folders of every golden case, sorted.
func GoldenDirs(t testing.TB) []string {
	t.Helper()
	var dirs []string
	for _, root := range goldenRoots {
		inputs, err := filepath.Glob(filepath.Join(repoRoot(), root, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, input := range inputs {
			dirs = append(dirs, filepath.Dir(input))
		}
	}
	if len(dirs) == 0 {
		t.Fatalf("no golden cases under %v", goldenRoots)
	}
	slices.Sort(dirs)
	return dirs
}

// GoldenName is the name of the golden case in dir.
func GoldenName(dir string) string {
	rel, err := filepath.Rel(repoRoot(), dir)
	if err != nil {
		return filepath.Base(dir)
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if parts[0] == "render" && len(parts) == 5 {
		// render/<kind>/testdata/<version>/<case>
		return parts[1] + "/" + parts[3] + "/" + parts[4]
	}
	return parts[len(parts)-1]
}

// GoldenDir is the folder of the golden case of this name, or of the one
// case whose folder has this name.
func GoldenDir(t testing.TB, name string) string {
	t.Helper()
	var found []string
	for _, dir := range GoldenDirs(t) {
		if GoldenName(dir) == name || filepath.Base(dir) == name {
			found = append(found, dir)
		}
	}
	switch len(found) {
	case 0:
		t.Fatalf("no golden case %s", name)
	case 1:
		return found[0]
	default:
		t.Fatalf("%d golden cases are named %s: name one by kind and version (mpijob/v2beta1/%s)", len(found), name, name)
	}
	return ""
}

// GoldenCases reads every golden case, for tests that start from
// reviewed inputs, as fuzz targets do for their seeds.
func GoldenCases(t testing.TB) []GoldenCase {
	t.Helper()
	dirs := GoldenDirs(t)
	cases := make([]GoldenCase, 0, len(dirs))
	for _, dir := range dirs {
		c := GoldenCase{Name: GoldenName(dir), Dir: dir}
		var err error
		if c.Input, err = os.ReadFile(filepath.Join(dir, "input.yaml")); err != nil {
			t.Fatal(err)
		}
		if config, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err == nil {
			c.Config = config
		} else if !os.IsNotExist(err) {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

// GoldenDocuments are the documents of the golden cases, inputs and
// function configs, one YAML text each: those of the given kinds, or every
// one when no kind is given. A renderer sees one document at a time.
func GoldenDocuments(t testing.TB, kinds ...string) []string {
	t.Helper()
	var docs []string
	for _, c := range GoldenCases(t) {
		for _, stream := range [][]byte{c.Input, c.Config} {
			nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(stream), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			for _, n := range nodes {
				if len(kinds) > 0 && !slices.Contains(kinds, n.GetKind()) {
					continue
				}
				docs = append(docs, n.MustString())
			}
		}
	}
	return docs
}

// GoldenInput is the input.yaml of the golden case of this name.
func GoldenInput(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(GoldenDir(t, name), "input.yaml")
}

// GoldenOutputs are the expected.yaml files of every golden case that
// renders: a case that fails has none.
func GoldenOutputs(t testing.TB) []string {
	t.Helper()
	var outputs []string
	for _, dir := range GoldenDirs(t) {
		if info, err := os.Stat(filepath.Join(dir, "expected.yaml")); err == nil && info.Size() > 0 {
			outputs = append(outputs, filepath.Join(dir, "expected.yaml"))
		}
	}
	return outputs
}
