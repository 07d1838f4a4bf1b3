package ynode_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

func TestGetAndGiven(t *testing.T) {
	doc := yaml.MustParse(`
base: &base {a: 1}
alias: *base
none: null
empty: {}
list: [x]
`).YNode()
	assert.Equal(t, yaml.AliasNode, ynode.Get(doc, "alias").Kind, "Get reads the field as written")
	assert.Equal(t, yaml.MappingNode, ynode.Given(doc, "alias").Kind, "Given follows the alias")
	assert.NotNil(t, ynode.Get(doc, "none"))
	assert.Nil(t, ynode.Given(doc, "none"), "null is no value")
	assert.Nil(t, ynode.Given(doc, "empty"), "nor is an empty mapping")
	assert.Nil(t, ynode.Get(doc, "missing"))
	assert.Nil(t, ynode.Get(ynode.Get(doc, "list"), "x"), "a sequence has no fields")
	assert.Nil(t, ynode.Get(nil, "x"))
}

func TestEnsureReplacesWhatIsNotOfItsKind(t *testing.T) {
	m := yaml.MustParse("spec: [a]\nlabels: {app: pi}\n").YNode()
	labels := ynode.EnsureMap(m, "labels")
	assert.Equal(t, "pi", ynode.Get(labels, "app").Value, "an existing mapping is kept")
	spec := ynode.EnsureMap(m, "spec")
	assert.Empty(t, spec.Content, "a field of another kind is replaced")
	env := ynode.EnsureSeq(m, "env")
	env.Content = append(env.Content, ynode.String("x"))
	assert.Equal(t, "spec: {}\nlabels: {app: pi}\nenv:\n- x\n", yaml.NewRNode(m).MustString())
}

func TestSetStringQuotesForYAML11(t *testing.T) {
	obj := yaml.MustParse("metadata: {}\n")
	require.NoError(t, obj.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", "labels"), ynode.SetString("ratio", "2:4")))
	require.NoError(t, obj.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", "labels"), ynode.SetString("app", "pi")))
	assert.Equal(t, "metadata: {labels: {ratio: \"2:4\", app: pi}}\n", obj.MustString())
}

// Set replaces a field's value where it stands, or adds the field last.
func ExampleSet() {
	container := yaml.MustParse("name: main\nimage: old\n").YNode()
	ynode.Set(container, "image", ynode.String("new"))
	ynode.Set(container, "workingDir", ynode.String("/work"))
	fmt.Print(yaml.NewRNode(container).MustString())
	// Output:
	// name: main
	// image: new
	// workingDir: /work
}
