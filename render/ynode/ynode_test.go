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
	for _, s := range []string{"y", "n", "on", "off", "yes", "no", "true", "1", "0o644", "1e3", "~", "", "pi", "registry.example/app:1", "0x1F", "0b101", ".inf", "-.5", "+1", "1_000", "0777", "8439046f817030ec"} {
		var buf bytes.Buffer
		require.NoError(t, yaml.NewEncoder(&buf).Encode(Map("v", s)))
		var back map[string]any
		require.NoError(t, yaml11.Unmarshal(buf.Bytes(), &back))
		assert.Equal(t, s, back["v"], "%q written as %q", s, buf.String())
	}
}

// Strings that kubectl's YAML 1.1 reader takes for strings but PyYAML and
// Ruby, which implement YAML 1.1's base-60 numbers, do not, are quoted too.
func TestBase60NumbersAreQuoted(t *testing.T) {
	for s, quoted := range map[string]bool{
		"2:4": true, "1:30": true, "-1:30": true, "190:20:30.15": true, "1:30.5": true,
		"registry:5000": false, "a:1": false, ":30": false, "1:60": false, "0:30": false,
	} {
		assert.Equal(t, quoted, String(s).Style == yaml.DoubleQuotedStyle, "%q", s)
	}
}

// QuoteForYAML11 quotes what String would, in nodes it did not make, and
// leaves alone what is not a plain string.
func TestQuoteForYAML11(t *testing.T) {
	doc, err := yaml.Parse("a: 2:4\nb: 'on'\nc: off\nd: 3\ne: [y, n, pi, =, 2024-01-01, <<]\nf: |\n  1:30\n1:30: key\n")
	require.NoError(t, err)
	QuoteForYAML11(doc.YNode())
	assert.Equal(t, "a: \"2:4\"\nb: 'on'\nc: \"off\"\nd: 3\ne: [\"y\", \"n\", pi, \"=\", \"2024-01-01\", \"<<\"]\nf: |\n  1:30\n\"1:30\": key\n", doc.MustString())
}

func TestMapSkipsNilPointers(t *testing.T) {
	var unset *int32
	three := int32(3)
	var buf bytes.Buffer
	require.NoError(t, yaml.NewEncoder(&buf).Encode(Map("a", unset, "b", &three, "c", []string{"x"})))
	assert.Equal(t, "b: 3\nc:\n- x\n", buf.String())
}
