package functions

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

// TestOutputReadsTheSameInYAML11 reads every golden output with PyYAML, a
// YAML 1.1 reader (as are kubectl's and Ruby's), and requires the same
// values as YAML 1.2 gives: a string left plain that YAML 1.1 takes for
// a number or a boolean ("2:4" is 124 there, "on" true) would reach such
// tools as another value. The input of yaml-1.1-strings writes such
// strings plain in pod templates, where the render keeps their style.
func TestOutputReadsTheSameInYAML11(t *testing.T) {
	python := pyYAML(t)
	outputs := testtool.GoldenOutputs(t)
	require.NotEmpty(t, outputs)
	for _, path := range outputs {
		t.Run(testtool.GoldenName(filepath.Dir(path)), func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, readYAML12(t, data), readYAML11(t, python, data))
		})
	}
}

// pyYAML finds a Python that has PyYAML: the one on PATH, else Debian's,
// which hack/tools.sh gives python3-yaml.
func pyYAML(t *testing.T) string {
	t.Helper()
	for _, python := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(python, "-c", "import yaml").Run() == nil {
			return python
		}
	}
	if os.Getenv(testtool.RequireEnv) != "" {
		t.Fatal("no python3 with PyYAML: run make tools")
	}
	t.Skip("no python3 with PyYAML: run make tools (make test does)")
	return ""
}

// readYAML11 is every document of a stream as PyYAML's safe loader reads
// it, through JSON; a value JSON cannot hold (a date) fails the test.
func readYAML11(t *testing.T, python string, data []byte) []any {
	t.Helper()
	cmd := exec.Command(python, "-c", "import json, sys, yaml\njson.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)")
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	var docs []any
	require.NoError(t, json.Unmarshal(out, &docs))
	return docs
}

// readYAML12 is every document of a stream as kyaml (YAML 1.2) reads it,
// through JSON as readYAML11 is.
func readYAML12(t *testing.T, data []byte) []any {
	t.Helper()
	docs := []any{}
	decoder := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc any
		err := decoder.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		require.NoError(t, err)
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		var back any
		require.NoError(t, json.Unmarshal(b, &back))
		docs = append(docs, back)
	}
}
