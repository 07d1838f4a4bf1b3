package functions

// Hostile input, read the way trainfn render and the KRM function read it:
// each case ends in objects or in errors that say where and what, never in
// a panic or half an output. The whole-process side (exit status, what
// reaches stdout, memory) is in cmd/trainfn. Hangs are guarded by go
// test's own -timeout: every case here takes well under a second.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
	"github.com/trainfn/trainfn/test/jobstream"
)

// hostileJob is a small MPIJob that renders; cases edit it.
var hostileJob = jobstream.Minimal

// edited is text with old replaced by replacement once; old must be there.
func edited(t *testing.T, text, old, replacement string) string {
	t.Helper()
	require.Contains(t, text, old)
	return strings.Replace(text, old, replacement, 1)
}

// rendered is what trainfn render makes of a stream: the output, or the
// read error, or the diagnostics.
type rendered struct {
	output  string
	readErr error
	diags   Diagnostics
}

func (r rendered) failed() bool { return r.readErr != nil || r.diags.HasErrors() }

// messages is everything the run says, one line each.
func (r rendered) messages() string {
	if r.readErr != nil {
		return r.readErr.Error()
	}
	return r.diags.Error()
}

func renderHostile(t *testing.T, text string) rendered {
	t.Helper()
	docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(text))
	if err != nil {
		require.NotEmpty(t, err.Error())
		return rendered{readErr: err}
	}
	objects, diags := Expand(docs)
	r := rendered{diags: diags}
	if diags.HasErrors() {
		require.Nil(t, objects, "a failed render outputs nothing")
		return r
	}
	var out bytes.Buffer
	require.NoError(t, WriteDocuments(&out, objects))
	r.output = out.String()
	return r
}

// readDiagnostics are the problems a read failed on, as the commands print
// them.
func readDiagnostics(t *testing.T, r rendered) Diagnostics {
	t.Helper()
	var diags Diagnostics
	require.True(t, errors.As(r.readErr, &diags), "the read fails with diagnostics: %v", r.readErr)
	return diags
}

// asResourceList wraps documents as the items of a ResourceList.
func asResourceList(items ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, item := range items {
		b.WriteString("- " + strings.ReplaceAll(strings.TrimSpace(item), "\n", "\n  ") + "\n")
	}
	return b.String()
}

// functionAnswer runs the KRM function on a ResourceList; when it fails
// with diagnostics, the answer must hold the items exactly as they came.
func functionAnswer(t *testing.T, rl string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := RunFunction(&kio.ByteReadWriter{Reader: strings.NewReader(rl), Writer: &out, KeepReaderAnnotations: true})
	var diags Diagnostics
	if errors.As(err, &diags) && out.Len() > 0 {
		requireItemsUnchanged(t, rl, out.String())
		require.Contains(t, out.String(), "results:")
	}
	return out.String(), err
}

func requireItemsUnchanged(t *testing.T, in, out string) {
	t.Helper()
	items := func(text string) string {
		n, err := yaml.Parse(text)
		require.NoError(t, err)
		return yaml.NewRNode(ynode.Get(n.YNode(), "items")).MustString()
	}
	require.Equal(t, items(in), items(out), "a failed run returns the items as they came")
}

// billionLaughs is an alias bomb in a ConfigMap.
const billionLaughs = jobstream.AliasBomb

func TestHostileAliasBombPassesThroughUnexpanded(t *testing.T) {
	r := renderHostile(t, billionLaughs)
	require.False(t, r.failed(), r.messages())
	assert.Contains(t, r.output, "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]", "the aliases are written back, not expanded")
	assert.Less(t, len(r.output), 2*len(billionLaughs))

	out, err := functionAnswer(t, asResourceList(billionLaughs))
	require.NoError(t, err)
	assert.Contains(t, out, "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]")
}

func TestHostileAliasBombInAJobSpecIsRefusedBeforeValidation(t *testing.T) {
	// The same aliases as labels, one level further in.
	bomb := strings.ReplaceAll(jobstream.AliasBombEntries, "\n  ", "\n    ")
	job := edited(t, hostileJob, "  name: pi\n", "  name: pi\n  labels:\n  "+bomb)
	r := renderHostile(t, job)
	diags := readDiagnostics(t, r)
	require.Len(t, diags, 1)
	assert.Equal(t, "metadata.labels.g", diags[0].Field, "the first label whose aliases expand beyond the limit")
	assert.Contains(t, diags[0].Message, "takes more than 1572864 bytes as JSON (YAML aliases expanded)")
	assert.Equal(t, 12, diags[0].Line)

	_, err := functionAnswer(t, asResourceList(job))
	assert.ErrorContains(t, err, "MPIJob pi: metadata.labels.g: the MPIJob takes more than 1572864 bytes")
}

func TestHostileResourceListWithAliasedItems(t *testing.T) {
	cm := "{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}"
	out, err := functionAnswer(t, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nstash: &all [&cm "+cm+"]\nitems: *all\n")
	assert.Empty(t, out, "no items to give back: which were meant is unknown")
	assert.EqualError(t, err, "<stdin>:4:8: error: the items of the ResourceList must be a sequence of objects, not a YAML alias (*all)")

	out, err = functionAnswer(t, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- &cm "+cm+"\n- *cm\n")
	assert.EqualError(t, err, "error: items[1]: a YAML alias (*cm) of another item: each object is written out once")
	assert.Contains(t, out, "- *cm")
}

func TestHostileDeepNesting(t *testing.T) {
	nested := func(opening, closing string, depth int) string {
		return strings.Repeat(opening, depth) + "1" + strings.Repeat(closing, depth)
	}
	passThrough := "apiVersion: example.com/v1\nkind: Deep\nmetadata:\n  name: deep\nspec: "
	for _, depth := range []int{10_000, 100_000} {
		for _, shape := range []struct{ name, open, close string }{{"mappings", "{a: ", "}"}, {"sequences", "[", "]"}} {
			value := nested(shape.open, shape.close, depth-1)
			t.Run(fmt.Sprintf("%d %s", depth, shape.name), func(t *testing.T) {
				plain := renderHostile(t, passThrough+value+"\n")
				inJob := renderHostile(t, edited(t, hostileJob, "spec:\n", "spec:\n  x: "+value+"\n"))
				if depth > 10_000 {
					// yaml.v3 refuses to parse deeper than 10000 levels.
					assert.ErrorContains(t, plain.readErr, "<stdin>:5: error: not YAML: exceeded max depth of 10000")
					assert.ErrorContains(t, inJob.readErr, "<stdin>:6: error: not YAML: exceeded max depth of 10000")
					return
				}
				require.False(t, plain.failed(), plain.messages())
				assert.Equal(t, strings.Count(value, shape.open), strings.Count(plain.output, shape.open), "passed through whole")

				diags := readDiagnostics(t, inJob)
				require.Len(t, diags, 1)
				assert.True(t, strings.HasPrefix(diags[0].Field, "spec.x"), diags[0].Field)
				assert.Equal(t, "nested more than 100 levels deep, deeper than any field of its schema", diags[0].Message)
			})
		}
	}
	t.Run("a document that is one deep sequence", func(t *testing.T) {
		r := renderHostile(t, nested("[", "]", 9_999)+"\n")
		assert.Equal(t, "<stdin>:1: error: not a Kubernetes object: the document is not a mapping", r.messages())
	})
}

func TestHostileBinaryGarbage(t *testing.T) {
	random := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	for _, c := range []struct {
		name, input, message string
	}{
		{"random bytes", string(random), `<stdin>:1:1: error: not a YAML file: the control character U+0010`},
		{"NUL bytes", strings.Repeat("\x00", 1024), `<stdin>:1:1: error: not a YAML file: the control character U+0000 may not appear in YAML, not even in a quoted string (a double-quoted string may hold it as the escape "\x00"); is it a binary file?`},
		{"a NUL in a value", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: \"x\x00y\"\n", `<stdin>:6:8: error: not a YAML file: the control character U+0000`},
		{"invalid UTF-8", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: caf\xe9\n", `<stdin>:6:9: error: not a YAML file: byte 0xE9 is not UTF-8 text; is it a binary file?`},
		{"a truncated UTF-8 sequence", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \xe2\x82\n", `<stdin>:4:9: error: not a YAML file: byte 0xE2 is not UTF-8 text`},
		{"an escape character", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \x1b[31mred\n", `<stdin>:4:9: error: not a YAML file: the control character U+001B`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := renderHostile(t, c.input)
			assert.ErrorContains(t, r.readErr, c.message)

			out, err := functionAnswer(t, c.input)
			assert.Empty(t, out)
			assert.ErrorContains(t, err, c.message)
		})
	}
	t.Run("UTF-16 with a byte order mark is YAML", func(t *testing.T) {
		text := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sixteen\n"
		utf16 := []byte{0xFF, 0xFE}
		for _, r := range text {
			utf16 = append(utf16, byte(r), 0)
		}
		r := renderHostile(t, string(utf16))
		require.False(t, r.failed(), r.messages())
		assert.Contains(t, r.output, "name: sixteen")
	})
}

func TestHostileDocumentsThatAreNoObjects(t *testing.T) {
	for _, c := range []struct {
		name, document, message string
	}{
		{"a scalar", "hello", "not a Kubernetes object: the document is not a mapping"},
		{"a sequence", "- a\n- b", "not a Kubernetes object: the document is not a mapping"},
		{"a sequence of one null", "-", "not a Kubernetes object: the document is not a mapping"},
		{"a sequence of sequences", "- - a", "not a Kubernetes object: the document is not a mapping"},
		{"a flow sequence of one mapping", "[{}]", "not a Kubernetes object: the document is not a mapping"},
		{"a sequence spelling a List", "[kind, List, apiVersion, v1]", "not a Kubernetes object: the document is not a mapping"},
		{"no apiVersion or kind", "replicas: 3\nimage: registry.example/app:1", "not a Kubernetes object: apiVersion and kind are required"},
		{"a kind that is a sequence", "apiVersion: v1\nkind: [ConfigMap]", "not a Kubernetes object: apiVersion and kind are required"},
		{"metadata that is a sequence", "apiVersion: v1\nkind: ConfigMap\nmetadata: [a]", "not a Kubernetes object: metadata is not a mapping"},
		{"annotations that are a sequence", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: [a]", "not a Kubernetes object: metadata.annotations is not a mapping"},
		{"labels that are a scalar", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: app", "not a Kubernetes object: metadata.labels is not a mapping"},
		{"metadata that is an alias", "apiVersion: v1\nkind: ConfigMap\nx: &m {name: a}\nmetadata: *m", "metadata: a YAML alias (*m): tools edit an object's metadata in place, kustomize, kpt and trainfn among them, and cannot edit an alias; write it out"},
		{"labels that are an alias", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: &a {k: v}\n  labels: *a", "ConfigMap a: metadata.labels: a YAML alias (*a)"},
		{"a job whose annotations are a sequence", edited(t, hostileJob, "  name: pi\n", "  name: pi\n  annotations: [a]\n"), "not a Kubernetes object: metadata.annotations is not a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := renderHostile(t, c.document+"\n")
			require.True(t, r.failed())
			assert.Contains(t, r.messages(), c.message)
			assert.Empty(t, r.output)

			_, err := functionAnswer(t, asResourceList(c.document))
			assert.ErrorContains(t, err, c.message)
		})
	}
	t.Run("Lists whose items are no objects", func(t *testing.T) {
		r := renderHostile(t, "apiVersion: v1\nkind: List\nitems: 3\n")
		assert.EqualError(t, r.readErr, "<stdin>:3: error: the items of a v1 List must be a sequence of objects, not a scalar")
		r = renderHostile(t, "apiVersion: v1\nkind: List\nitems: [1, [a]]\n")
		assert.Equal(t, "<stdin>:3: error: not a Kubernetes object: the document is not a mapping\n<stdin>:3: error: not a Kubernetes object: the document is not a mapping", r.messages())
		r = renderHostile(t, "apiVersion: v1\nkind: List\nitems:\n- &cm {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- *cm\n")
		assert.EqualError(t, r.readErr, "<stdin>:5: error: items[1] is a YAML alias (*cm) of another item: each object is written out once")
	})
	t.Run("a plain stream instead of a ResourceList", func(t *testing.T) {
		out, err := functionAnswer(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- - a\n")
		assert.Empty(t, out)
		assert.EqualError(t, err, "<stdin>:5: error: not a Kubernetes object: the document is not a mapping")
	})
}

func TestHostileDuplicateKeys(t *testing.T) {
	t.Run("in a document passed through", func(t *testing.T) {
		r := renderHostile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\ndata:\n  k: \"1\"\n  k: \"2\"\n")
		assert.Equal(t, `<stdin>:5:3: error: ConfigMap a: metadata.name: mapping key "name" already defined at line 4: YAML keeps only one of them, and which one depends on the tool that reads it
<stdin>:8:3: error: ConfigMap a: data.k: mapping key "k" already defined at line 7: YAML keeps only one of them, and which one depends on the tool that reads it`, r.messages())
	})
	t.Run("kind given twice", func(t *testing.T) {
		r := renderHostile(t, "kind: ConfigMap\n"+hostileJob)
		assert.Contains(t, r.messages(), `<stdin>:3:1: error: ConfigMap pi: kind: mapping key "kind" already defined at line 1`)
	})
	t.Run("in a large mapping", func(t *testing.T) {
		var data strings.Builder
		for i := range 10_000 {
			fmt.Fprintf(&data, "  k%d: v\n", i)
		}
		data.WriteString("  k5000: again\n")
		r := renderHostile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n"+data.String())
		assert.Contains(t, r.messages(), `<stdin>:10006:3: error: ConfigMap a: data.k5000: mapping key "k5000" already defined at line 5006`)
	})
	t.Run("in a job spec", func(t *testing.T) {
		r := renderHostile(t, edited(t, hostileJob, "      replicas: 2\n", "      replicas: 2\n      replicas: 3\n"))
		assert.Equal(t, `<stdin>:15: error: MPIJob pi: mapping key "replicas" already defined at line 14`, r.messages())

		_, err := functionAnswer(t, asResourceList(edited(t, hostileJob, "      replicas: 2\n", "      replicas: 2\n      replicas: 3\n")))
		assert.ErrorContains(t, err, `MPIJob pi: mapping key "replicas" already defined`)
	})
	t.Run("in a ResourceList's item", func(t *testing.T) {
		_, err := functionAnswer(t, asResourceList("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b"))
		assert.EqualError(t, err, `error: ConfigMap a: metadata.name: mapping key "name" already defined at line 7: YAML keeps only one of them, and which one depends on the tool that reads it`)
	})
	t.Run("in the ResourceList itself", func(t *testing.T) {
		rl := asResourceList("{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}") + "items:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n"
		out, err := functionAnswer(t, rl)
		assert.Empty(t, out, "which items are meant is unknown: none are given back")
		assert.EqualError(t, err, "<stdin>:5:1: error: the ResourceList gives items twice (first at line 3): which one holds what it lists is ambiguous")
	})
}
