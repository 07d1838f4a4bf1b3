package testtool

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// GoldenCase is a case of testdata/: the stream trainfn render reads and,
// for a case run as a KRM function, its function config.
type GoldenCase struct {
	Name  string
	Input []byte
	// Config is nil when the case has no config.yaml.
	Config []byte
}

// GoldenCases reads every golden case, for tests that start from
// reviewed inputs, as fuzz targets do for their seeds.
func GoldenCases(t testing.TB) []GoldenCase {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join(repoRoot(), "testdata", "*", "input.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden cases under testdata/: %v", err)
	}
	cases := make([]GoldenCase, 0, len(inputs))
	for _, input := range inputs {
		dir := filepath.Dir(input)
		c := GoldenCase{Name: filepath.Base(dir)}
		if c.Input, err = os.ReadFile(input); err != nil {
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
