package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Kueue's docs have users label the operator's job with its queue. Copied
// onto a Job or a StatefulSet, the label would make each a Workload of its
// own, apart from the job's pod group, and Kueue's other keys would change
// how it admits them: the objects carry none of them, and the pods only
// those Kueue reads on a pod group's pods.
func TestKueuesKeysStayOffTheRenderedObjects(t *testing.T) {
	owner := Owner{Name: "pi", Labels: map[string]string{
		"team":                                  "a",
		"kueue.x-k8s.io/queue-name":             "user-queue",
		"kueue.x-k8s.io/priority-class":         "low",
		"kueue.x-k8s.io/max-exec-time-seconds":  "600",
		"kueue.x-k8s.io/prebuilt-workload-name": "w",
		"kueue.x-k8s.io/pod-group-name":         "g",
	}, Annotations: map[string]string{
		"note":                                 "kept",
		"kueue.x-k8s.io/elastic-job":           "true",
		"kueue.x-k8s.io/job-min-parallelism":   "1",
		"kueue.x-k8s.io/pod-group-total-count": "3",
	}}

	job := owner.Object("batch/v1", "Job", "pi-launcher", map[string]string{"own": "x"})
	assert.Equal(t, map[string]string{"team": "a", "own": "x"}, job.GetLabels())
	assert.Equal(t, map[string]string{"note": "kept"}, job.GetAnnotations())

	template, _ := owner.PodTemplate(yaml.MustParse(`{spec: {containers: [{name: c, image: i}]}}`), nil, "launcher", "Never")
	labels := yaml.NewRNode(template.Node()).GetLabels()
	assert.NotContains(t, labels, "team", "the job's own labels stay on the objects: editing one restarts no pod")
	assert.Equal(t, "low", labels["kueue.x-k8s.io/priority-class"], "Kueue reads a pod group's priority on its pods")
	assert.Equal(t, "600", labels["kueue.x-k8s.io/max-exec-time-seconds"])
	for _, k := range []string{"kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/prebuilt-workload-name", "kueue.x-k8s.io/pod-group-name"} {
		assert.NotContains(t, labels, k, "the gang pass alone queues the pods")
	}
}
