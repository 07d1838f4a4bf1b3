package gang

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/workload"
)

func TestKubernetesGangIsOnePodGroupForEveryPod(t *testing.T) {
	members := launcherAndWorkers(t)
	objs, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: &Policy{PriorityClass: "low"}, Members: members}, options.Gang{Scheduler: options.Kubernetes})
	require.Empty(t, errs)
	assert.Empty(t, warnings)
	require.Len(t, objs, 1)
	assert.Equal(t, "scheduling.k8s.io/v1beta1", objs[0].GetApiVersion())
	assert.Equal(t, "PodGroup", objs[0].GetKind())
	assert.Equal(t, "4\n", spec(t, objs[0], "spec", "schedulingPolicy", "gang", "minCount"), "the launcher and 3 workers")
	for _, m := range members {
		pod := yaml.NewRNode(m.Template.Node())
		assert.Equal(t, "pi\n", spec(t, pod, "spec", "schedulingGroup", "podGroupName"))
		assert.Equal(t, "low\n", spec(t, pod, "spec", "priorityClassName"))
		assert.Empty(t, spec(t, pod, "spec", "schedulerName"), "kube-scheduler's own")
	}
}

func TestKubernetesGangSaysWhatItIgnores(t *testing.T) {
	policy := &Policy{
		MinAvailable:           ptr.To[int32](2),
		ScheduleTimeoutSeconds: ptr.To[int32](60),
		MinResources:           map[string]resource.Quantity{"cpu": resource.MustParse("1")},
	}
	objs, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: policy, Members: launcherAndWorkers(t)}, options.Gang{Scheduler: options.Kubernetes})
	require.Empty(t, errs)
	assert.Equal(t, "2\n", spec(t, objs[0], "spec", "schedulingPolicy", "gang", "minCount"), "minAvailable sizes the gang")
	require.Len(t, warnings, 2)
	assert.Equal(t, "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds", warnings[0].Field.String())
	assert.Equal(t, "spec.runPolicy.schedulingPolicy.minResources", warnings[1].Field.String())
}
