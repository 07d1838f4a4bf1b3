package gates

import (
	"encoding/json"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

// gatedPod is a pod at the allocation gate and another one, whose
// template requires a zone.
func gatedPod() *corev1.Pod {
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	return &corev1.Pod{Spec: corev1.PodSpec{
		SchedulingGates: []corev1.PodSchedulingGate{{Name: "other"}, {Name: handoff.AllocationGate}},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}, {MatchExpressions: []corev1.NodeSelectorRequirement{zone}}},
		}}},
	}}
}

// applied is the pod as a JSON merge patch leaves it.
func applied(t *testing.T, p *corev1.Pod, patch map[string]any) *corev1.Pod {
	t.Helper()
	original, err := json.Marshal(p)
	require.NoError(t, err)
	merged, err := jsonpatch.MergePatch(original, write.MustJSON(patch))
	require.NoError(t, err)
	var out corev1.Pod
	require.NoError(t, json.Unmarshal(merged, &out))
	return &out
}

func TestUngateNarrowsEveryTermAndKeepsOtherGates(t *testing.T) {
	p := applied(t, gatedPod(), ungate(gatedPod(), "node-7", time.Unix(0, 0)))
	assert.Equal(t, []corev1.PodSchedulingGate{{Name: "other"}}, p.Spec.SchedulingGates)
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	require.Len(t, terms, 2)
	for _, term := range terms {
		assert.Len(t, term.MatchExpressions, 1, "the template's requirement stays")
		assert.Equal(t, []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-7"}}}, term.MatchFields)
	}
	assert.Equal(t, "node-7", PinnedTo(p))
	p.Spec.NodeName = "node-7"
	assert.Equal(t, "", PinnedTo(p), "a bound pod is no longer waiting for its pin")
}

func TestUngateWithoutANodeOnlyLiftsTheGate(t *testing.T) {
	pod := gatedPod()
	pod.Spec.SchedulingGates = pod.Spec.SchedulingGates[1:]
	p := applied(t, pod, ungate(pod, "", time.Unix(0, 0)))
	assert.Empty(t, p.Spec.SchedulingGates)
	assert.Equal(t, "", PinnedTo(p))
	assert.Empty(t, p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields)
}
