package allocation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
)

func TestUnschedulableCountsFromThePin(t *testing.T) {
	created := time.Unix(1000, 0)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			LastTransitionTime: metav1.NewTime(created),
		}}},
	}
	now := created.Add(time.Minute)
	assert.True(t, unschedulableFor(p, now, 30*time.Second))
	// Gated for a while, pinned 10 seconds ago: the condition's time is
	// the pod's creation, not the pin.
	p.Annotations[handoff.PinnedAt] = now.Add(-10 * time.Second).UTC().Format(time.RFC3339)
	assert.False(t, unschedulableFor(p, now, 30*time.Second))
	assert.True(t, unschedulableFor(p, now.Add(25*time.Second), 30*time.Second))
}
