package functions

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
)

// TestSameNamePyTorchJobAndTrainJobCoexist renders the PyTorchJob of
// Trainer's migration guide and the TrainJob it becomes, which keeps its
// name, as one namespace holds them while the job moves: every object is
// output once (the golden case), each pod's subdomain is a Service of its
// own job's kind, and no Service selects pods of both kinds. Labels the
// Job and StatefulSet controllers add to pods are taken to match any
// value, so a Service that may select another's pods at run time fails.
func TestSameNamePyTorchJobAndTrainJobCoexist(t *testing.T) {
	out, diags := renderText(t, readCase(t, "same-name-pytorchjob-trainjob"))
	require.False(t, diags.HasErrors(), diags.Error())
	docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(out))
	require.NoError(t, err)
	type pods struct {
		kind, subdomain string
		labels          map[string]string
	}
	var workloads []pods
	services := map[string]map[string]string{}
	for _, d := range docs {
		switch d.Node.GetKind() {
		case "Service":
			selector := map[string]string{}
			node, err := d.Node.Pipe(yaml.Lookup("spec", "selector"))
			require.NoError(t, err)
			require.NoError(t, node.YNode().Decode(&selector))
			services[d.Node.GetName()] = selector
		case "Job", "StatefulSet":
			labels := map[string]string{}
			node, err := d.Node.Pipe(yaml.Lookup("spec", "template", "metadata", "labels"))
			require.NoError(t, err)
			require.NoError(t, node.YNode().Decode(&labels))
			subdomain, err := d.Node.Pipe(yaml.Lookup("spec", "template", "spec", "subdomain"))
			require.NoError(t, err)
			workloads = append(workloads, pods{kind: labels[handoff.KindLabel], subdomain: yaml.GetValue(subdomain), labels: labels})
		}
	}
	kinds := map[string]bool{}
	for _, w := range workloads {
		kinds[w.kind] = true
	}
	require.Equal(t, map[string]bool{"PyTorchJob": true, "TrainJob": true}, kinds, "the workloads' kinds")
	for name, selector := range services {
		selected := map[string]bool{}
		for _, w := range workloads {
			if selects(selector, w.labels) {
				selected[w.kind] = true
			}
		}
		assert.LessOrEqual(t, len(selected), 1, "Service %s selects pods of %v", name, selected)
	}
	for _, w := range workloads {
		selector, ok := services[w.subdomain]
		require.True(t, ok, "no Service %s, the subdomain of a %s's pods", w.subdomain, w.kind)
		assert.True(t, selects(selector, w.labels), "Service %s does not select the %s's pods it names", w.subdomain, w.kind)
	}
}

// selects tells whether a selector may select pods of a template: labels
// the controllers add to each pod match any value.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if k == "batch.kubernetes.io/job-completion-index" || k == "statefulset.kubernetes.io/pod-name" {
			continue
		}
		if labels[k] != v {
			return false
		}
	}
	return true
}
