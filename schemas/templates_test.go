package schemas

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

// Names around every kind's bound (63 less its longest derived suffix),
// and names each rule of a DNS-1035 label refuses.
func candidateNames() []string {
	names := []string{"a", "pi", "Upper", "ends-", "-starts", "1digit", "has.dot", "has_underscore", "ünïcode", ""}
	for n := 35; n <= 64; n++ {
		names = append(names, strings.Repeat("a", n))
	}
	return names
}

// A job of a known template has only its own fields checked. Whatever its
// name and the orchestrator's annotations, the verdict, the problems (messages, paths, positions) and the defaults
// must be those of a validation in full; the golden documents give a
// template of every kind and version.
func TestKnownTemplateDecidesAsAFullValidation(t *testing.T) {
	perSchema := map[Schema]int{}
	for _, text := range testtool.GoldenDocuments(t) {
		doc := yaml.MustParse(text)
		s := For(Kind{APIVersion: doc.GetApiVersion(), Kind: doc.GetKind()})
		// A Trainer runtime is no job spec: no name of its derives others.
		if doc.GetKind() == FunctionConfig.Kind || strings.HasSuffix(doc.GetKind(), "TrainingRuntime") || perSchema[s] == 2 {
			continue
		}
		cached, full := NewValidator(), NewValidator()
		if _, err := cached.schema(s); err != nil {
			continue // not a job spec
		}
		if _, problems := cached.Validate(doc, s); problems != nil {
			continue // a golden case of a refused spec: no template
		}
		perSchema[s]++
		_, _ = cached.Validate(doc, s) // the second acceptance records it
		t.Run(fmt.Sprintf("%s/%s", s, doc.GetName()), func(t *testing.T) {
			for i, name := range candidateNames() {
				named := withName(t, doc, name)
				if i%2 == 1 {
					// As kustomize passes an item: its index and file.
					require.NoError(t, named.PipeE(yaml.SetAnnotation("config.kubernetes.io/index", fmt.Sprint(i))))
					require.NoError(t, named.PipeE(yaml.SetAnnotation("internal.config.kubernetes.io/path", name+".yaml")))
				}
				got, gotProblems := cached.Validate(named, s)
				full.templates = templates{} // every validation in full
				want, wantProblems := full.Validate(named, s)
				require.Equal(t, wantProblems, gotProblems, "name %q", name)
				require.Equal(t, want == nil, got == nil, "name %q", name)
				if want == nil {
					continue
				}
				assert.Equal(t, want.Doc.MustString(), got.Doc.MustString(), "name %q", name)
				var wantSpec, gotSpec map[string]any
				require.NoError(t, want.Decode("spec", &wantSpec))
				require.NoError(t, got.Decode("spec", &gotSpec))
				assert.Equal(t, wantSpec, gotSpec, "name %q", name)
			}
			assert.Positive(t, cached.templates.hits, "no name was checked alone: the test tested nothing")
		})
	}
	assert.GreaterOrEqual(t, len(perSchema), 6, "a template of every job kind and version")
}

func withName(t *testing.T, doc *yaml.RNode, name string) *yaml.RNode {
	t.Helper()
	named := doc.Copy()
	require.NoError(t, named.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata"), yaml.SetField("name", yaml.NewStringRNode(name))))
	return named
}

// Only what decoding reads of a document makes its template: not its
// name, style or comments, but every value and its type.
func TestTemplateKey(t *testing.T) {
	key := func(text string) (templateKey, ownFields, bool) {
		return keyOf(Schema{Package: "./p", Definition: "#D"}, yaml.MustParse(text).YNode())
	}
	base, own, ok := key("metadata: {name: a}\nspec: {replicas: 2}\n")
	require.True(t, ok)
	assert.Equal(t, ownFields{Name: "a"}, own)
	indexed, own, ok := key("metadata: {name: a, annotations: {config.kubernetes.io/index: '3', internal.config.kubernetes.io/path: a.yaml, x: y}}\nspec: {replicas: 2}\n")
	require.True(t, ok)
	assert.Equal(t, ownFields{Name: "a", Annotations: map[string]string{"config.kubernetes.io/index": "3", "internal.config.kubernetes.io/path": "a.yaml"}}, own)
	other, _, _ := key("metadata: {name: b, annotations: {config.kubernetes.io/index: '4', internal.config.kubernetes.io/path: b.yaml, x: y}}\nspec: {replicas: 2}\n")
	assert.Equal(t, indexed, other, "the orchestrator's annotations are the job's own")

	for _, same := range []string{
		"metadata: {name: b}\nspec: {replicas: 2}\n",
		"metadata:\n  name: 'c'\nspec:\n  # a comment\n  replicas: 2\n",
	} {
		k, _, ok := key(same)
		require.True(t, ok, same)
		assert.Equal(t, base, k, "%s: the same template", same)
	}
	for _, other := range []string{
		"metadata: {name: a}\nspec: {replicas: 3}\n",
		`metadata: {name: a}` + "\n" + `spec: {replicas: "2"}` + "\n",
		"metadata: {name: a, labels: {x: y}}\nspec: {replicas: 2}\n",
		"metadata: {name: a}\nspec: {replicas: 2, more: null}\n",
	} {
		k, _, ok := key(other)
		require.True(t, ok, other)
		assert.NotEqual(t, base, k, "%s: another template", other)
	}
	k, _, _ := keyOf(Schema{Package: "./q", Definition: "#D"}, yaml.MustParse("metadata: {name: a}\nspec: {replicas: 2}\n").YNode())
	assert.NotEqual(t, base, k, "another schema")

	for _, none := range []string{
		"metadata: {name: 5}\nspec: {}\n",
		"metadata: {name: {a: b}}\nspec: {}\n",
		"metadata: {labels: {}}\nspec: {}\n",
		"metadata: {name: a}\nspec: &s {x: 1}\nother: *s\n",
		"metadata: {name: a, annotations: {config.kubernetes.io/index: 3}}\nspec: {}\n",
	} {
		_, _, ok := key(none)
		assert.False(t, ok, "%s: no template", none)
	}
}

// A name the known template's constraint refuses is validated in full, so
// its problems are the full validation's own.
func TestKnownTemplateRefusesABadName(t *testing.T) {
	v := NewValidator()
	s := For(Kind{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"})
	for range 2 {
		_, problems := v.Validate(yaml.MustParse(minimal), s)
		require.Empty(t, problems)
	}
	_, problems := v.Validate(withName(t, yaml.MustParse(minimal), strings.Repeat("p", 60)), s)
	require.Len(t, problems, 1)
	assert.Equal(t, "metadata.name", problems[0].Field)
	assert.Contains(t, problems[0].Message, "at most 54 characters")
	assert.Zero(t, v.templates.hits)

	_, problems = v.Validate(withName(t, yaml.MustParse(minimal), "pi-2"), s)
	require.Empty(t, problems)
	assert.Equal(t, 1, v.templates.hits)
}
