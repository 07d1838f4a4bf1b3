package functions

// Explicit YAML tags: trainfn reads documents with kyaml, which keeps a
// tagged scalar's text, while kubectl and the API server read them with
// sigs.k8s.io/yaml, which converts it. A tag that would make the two
// disagree is refused where trainfn reads it; one that changes nothing
// renders.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigsyaml "sigs.k8s.io/yaml"
)

func TestHostileTagsThatChangeAValue(t *testing.T) {
	for _, c := range []struct {
		name, old, tagged, field, message string
		line, column                      int
	}{
		{"a job named in base64", "  name: pi\n", "  name: !!binary cGk=\n", "metadata.name",
			`the YAML tag !!binary makes the value base64: kubectl and the API server read "pi", kustomize, kpt and trainfn its text "cGk=", so the render and the cluster would disagree; write the value itself, without the tag`, 4, 9},
		{"base64 that is not", "  name: pi\n", "  name: !!binary pi\n", "metadata.name",
			"kubectl and the API server read an error (it is no base64)", 4, 9},
		{"a local tag", "image: registry.example/app:1\n    Worker", "image: !image registry.example/app:1\n    Worker",
			"spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].image",
			"the YAML tag !image is no type of the Kubernetes API: kustomize, kpt and trainfn keep it as written, and what kubectl and the API server make of the value need not be what trainfn renders; write the value without the tag", 12, 20},
		{"a count as a number", "replicas: 2", "replicas: !!float 2", "spec.mpiReplicaSpecs.Worker.replicas",
			"the YAML tag !!float makes a number out of a value that is an integer without it", 14, 17},
		{"a quoted count", "replicas: 2", `replicas: !!int "2"`, "spec.mpiReplicaSpecs.Worker.replicas",
			"the YAML tag !!int makes an integer out of a value that is a string without it: kustomize, kpt and trainfn keep the text as written, kubectl and the API server convert it", 14, 17},
		{"a tagged key", "  name: pi\n", "  ? !!binary bmFtZQ==\n  : pi\n", "metadata.bmFtZQ==",
			`kubectl and the API server read "name", kustomize, kpt and trainfn its text "bmFtZQ=="`, 4, 5},
		{"an ordered map", "      template:\n        spec:\n          containers:\n          - name: worker",
			"      template:\n        spec:\n          containers: !!omap\n          - name: worker",
			"spec.mpiReplicaSpecs.Worker.template.spec.containers", "the YAML tag !!omap is no type of the Kubernetes API", 17, 23},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := edited(t, hostileJob, c.old, c.tagged)
			r := renderHostile(t, job)
			diags := readDiagnostics(t, r)
			require.Len(t, diags, 1, r.messages())
			assert.Equal(t, c.field, diags[0].Field)
			assert.Equal(t, c.line, diags[0].Line)
			assert.Equal(t, c.column, diags[0].Column)
			assert.Contains(t, diags[0].Message, c.message)

			_, err := functionAnswer(t, asResourceList(job))
			assert.ErrorContains(t, err, c.field+": the YAML tag")
			assert.ErrorContains(t, err, c.message)
		})
	}
}

// TestHostileTagsAreReadAsTheClusterReadsThem holds the premise of the
// rule: what sigs.k8s.io/yaml, as kubectl and the API server use it,
// makes of a refused tag differs from the text trainfn keeps; and a tag
// trainfn accepts reads alike in both.
func TestHostileTagsAreReadAsTheClusterReadsThem(t *testing.T) {
	cluster := func(value string) any {
		t.Helper()
		b, err := sigsyaml.YAMLToJSON([]byte("v: " + value + "\n"))
		require.NoError(t, err, value)
		var out struct{ V any }
		require.NoError(t, json.Unmarshal(b, &out))
		return out.V
	}
	assert.Equal(t, "pi", cluster("!!binary cGk="), "kubectl's reader decodes base64; kyaml keeps cGk=")
	assert.Equal(t, float64(2), cluster(`!!int "2"`), `kubectl's reader makes a number of "2"`)

	for _, value := range []string{"!!str 3", "!!str true", "!!int 3", "!!bool true", "!!float 1.5", "!!null ~", `!!str "x"`, "!!str 0x10"} {
		t.Run(value, func(t *testing.T) {
			job := edited(t, hostileJob, "  name: pi\n", "  name: pi\n  annotations:\n    a: "+value+"\n")
			// An annotation must be a string: the schema refuses the
			// others, but not for their tag.
			r := renderHostile(t, job)
			assert.NotContains(t, r.messages(), "YAML tag")
			if strings.HasPrefix(value, "!!str") {
				assert.False(t, r.failed(), r.messages())
			}
			docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(job))
			require.NoError(t, err)
			var read any
			require.NoError(t, docs[0].Node.YNode().Decode(&read))
			annotations := read.(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)
			trainfn, err := json.Marshal(annotations["a"])
			require.NoError(t, err)
			want, err := json.Marshal(cluster(value))
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(trainfn), "trainfn and the cluster read the same value")
			if !strings.HasPrefix(value, "!!str") {
				return
			}
			text := docs[0].Node.GetAnnotations()["a"]
			assert.Equal(t, cluster(value), text, "a string's text is what the cluster reads")
		})
	}
}

func TestHostileTagsOfDocumentsPassedThrough(t *testing.T) {
	r := renderHostile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: !!binary cGk=\n  namespace: !team ml\n  labels: !!map {a: !x b}\ndata:\n  x: !!binary cGk=\n")
	assert.Equal(t, `<stdin>:4:9: error: ConfigMap cGk=: metadata.name: the YAML tag !!binary makes the value base64: kubectl and the API server read "pi", kustomize, kpt and trainfn its text "cGk=", so the render and the cluster would disagree; write the value itself, without the tag
<stdin>:5:14: error: ConfigMap cGk=: metadata.namespace: the YAML tag !team is no type of the Kubernetes API: kustomize, kpt and trainfn keep it as written, and what kubectl and the API server make of the value need not be what trainfn renders; write the value without the tag`,
		r.messages(), "only the fields that name a document: the others are passed through, for the cluster to read")

	r = renderHostile(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pi\ndata:\n  x: !!binary cGk=\n  y: !local z\n")
	require.False(t, r.failed(), r.messages())
	assert.Contains(t, r.output, "  x: !!binary cGk=\n  y: !local z\n", "passed through as written")
}
