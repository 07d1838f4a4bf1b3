package functions

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/trainfn/trainfn/test/testtool"
)

// trickyItems are items whose encoding depends on where it stands:
// comments above, beside and below nodes, anchors and aliases (one to
// another item's anchor), block scalars that need an indentation
// indicator, flow collections, long strings, empty ones.
var trickyItems = []string{
	"# head of the first item\napiVersion: v1\nkind: ConfigMap # beside\nmetadata:\n  name: a\n  labels: &l {x: y}\ndata:\n  script: |2\n      indented first line\n    then less\n  folded: >-\n    one\n    two\n# foot of the first item",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels: *l\ndata:\n  empty: \"\"\n  long: " + strings.Repeat("word ", 40) + "\n  list: [1, 2, {a: b}]\n  # a comment between keys\n  last: x\n",
	"{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  k: v\n# foot of the last item\n",
}

// TestResourceListWrittenAsKyamlWritesIt holds writeList to kyaml's own
// writer, byte for byte, on the function's answers for every golden case
// and on items whose encoding depends on where they stand.
func TestResourceListWrittenAsKyamlWritesIt(t *testing.T) {
	lists := map[string][]byte{
		"tricky items":           []byte(asResourceList(trickyItems...)),
		"tricky items, function": []byte(asResourceList(trickyItems...) + "functionConfig:\n  apiVersion: fn.trainfn.dev/v1alpha1\n  kind: TrainFn\n  metadata: {name: c}\n"),
		"no items":               []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"),
		"a v1 List":              []byte("apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(trickyItems[2], "\n", "\n  ") + "\n"),
	}
	for _, c := range testtool.GoldenCases(t) {
		lists[c.Name] = goldenResourceList(t, c, "")
		lists[c.Name+", kpt"] = goldenResourceList(t, c, c.Name+".yaml")
	}
	for name, list := range lists {
		t.Run(name, func(t *testing.T) {
			// As it came, and as the function answers.
			for _, p := range []framework.ResourceListProcessor{
				framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil }),
				Function{},
			} {
				var kyaml, ours bytes.Buffer
				kyamlErr := framework.Execute(p, &kio.ByteReadWriter{Reader: bytes.NewReader(list), Writer: &kyaml, KeepReaderAnnotations: true})
				oursErr := execute(p, &kio.ByteReadWriter{Reader: bytes.NewReader(list), Writer: &ours, KeepReaderAnnotations: true})
				assert.Equal(t, errorText(kyamlErr), errorText(oursErr))
				require.Equal(t, kyaml.String(), ours.String())
			}
		})
	}
}

// TestResourceListWrittenBackAsItCame: a list refused before kyaml reads
// it is written back with writeList too, and reads back with its items
// unchanged.
func TestResourceListWrittenBackAsItCame(t *testing.T) {
	rl := asResourceList(append(trickyItems[:2:2], "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e\n  name: f\n")...)
	out, err := functionAnswer(t, rl)
	assert.ErrorContains(t, err, `mapping key "name" already defined`)
	assert.Contains(t, out, "  labels: *l\n", "an alias of another item's anchor is written as it came")
}
