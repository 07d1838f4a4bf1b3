package ynode

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yaml11 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Strings trainfn writes must read back as strings with YAML 1.1, which
// kubectl and most Kubernetes clients use.
func TestStringsStayStringsInYAML11(t *testing.T) {
	for _, s := range []string{"y", "n", "on", "off", "yes", "no", "true", "1", "0o644", "1e3", "~", "", "pi", "registry.example/app:1"} {
		var buf bytes.Buffer
		require.NoError(t, yaml.NewEncoder(&buf).Encode(Map("v", s)))
		var back map[string]any
		require.NoError(t, yaml11.Unmarshal(buf.Bytes(), &back))
		assert.Equal(t, s, back["v"], "%q written as %q", s, buf.String())
	}
}

func TestMapSkipsNilPointers(t *testing.T) {
	var unset *int32
	three := int32(3)
	var buf bytes.Buffer
	require.NoError(t, yaml.NewEncoder(&buf).Encode(Map("a", unset, "b", &three, "c", []string{"x"})))
	assert.Equal(t, "b: 3\nc:\n- x\n", buf.String())
}
