package kueue

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWhichKeysReachWhat(t *testing.T) {
	labels := map[string]string{
		"app":                                   "pi",
		QueueLabel:                              "q",
		PriorityClassLabel:                      "low",
		MaxExecTimeLabel:                        "60",
		"kueue.x-k8s.io/prebuilt-workload-name": "w",
		"kueue.x-k8s.io/pod-group-name":         "g",
		"provreq.kueue.x-k8s.io/x":              "not Kueue's prefix",
	}
	assert.Equal(t, map[string]string{"app": "pi", "provreq.kueue.x-k8s.io/x": "not Kueue's prefix"}, Without(labels))
	assert.Equal(t, map[string]string{PriorityClassLabel: "low", MaxExecTimeLabel: "60"}, PodLabels(labels), "the job's own labels stay off its pods")
	assert.Equal(t, map[string]string{PriorityClassLabel: "low", MaxExecTimeLabel: "60"}, WorkloadLabels(labels))
	assert.Equal(t, []string{"kueue.x-k8s.io/pod-group-name", "kueue.x-k8s.io/prebuilt-workload-name"}, DroppedLabels(labels),
		"the queue and the Workload's labels are rendered; the others would change what Kueue admits")
	assert.Equal(t, []string{"kueue.x-k8s.io/elastic-job"}, DroppedAnnotations(map[string]string{"kueue.x-k8s.io/elastic-job": "true", "note": "x"}))
	assert.Empty(t, PodLabels(nil))
}
