package gang

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/workload"
)

// member builds a rendered workload of n pods from a pod template.
func member(t *testing.T, n int32, template string) Member {
	t.Helper()
	tmpl := pod.NewTemplate(yaml.MustParse(template), field.NewPath("spec", "template"))
	w := yaml.MustParse(`{apiVersion: batch/v1, kind: Job, metadata: {name: w}, spec: {}}`)
	require.NoError(t, w.PipeE(yaml.Lookup("spec"), yaml.SetField("template", yaml.NewRNode(tmpl.Node()))))
	return Member{Workload: w, Template: tmpl, Pods: n}
}

func launcherAndWorkers(t *testing.T) []Member {
	return []Member{
		member(t, 1, `{spec: {containers: [{name: l, image: i, resources: {requests: {cpu: 500m}}}]}}`),
		// Requests default to limits; a larger init container counts for
		// the pod; sidecar-free containers add up.
		member(t, 3, `{spec: {initContainers: [{name: init, image: i, resources: {limits: {cpu: "4"}}}],
			containers: [{name: a, image: i, resources: {limits: {cpu: "1", nvidia.com/gpu: 2}}},
			             {name: b, image: i, resources: {requests: {cpu: "1", memory: 1Gi}}}]}}`),
	}
}

func spec(t *testing.T, obj *yaml.RNode, path ...string) string {
	t.Helper()
	n, err := obj.Pipe(yaml.Lookup(path...))
	require.NoError(t, err)
	if n == nil {
		return ""
	}
	return n.MustString()
}

func TestVolcanoGroupsEveryPod(t *testing.T) {
	members := launcherAndWorkers(t)
	objs, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: members}, options.Gang{Scheduler: options.Volcano})
	require.Empty(t, errs)
	assert.Empty(t, warnings)
	require.Len(t, objs, 1)
	assert.Equal(t, "scheduling.volcano.sh/v1beta1", objs[0].GetApiVersion())
	assert.Equal(t, "4\n", spec(t, objs[0], "spec", "minMember"), "the launcher and three workers")
	// 0.5 + 3 x max(4 for the init container, 1 + 1 for the containers).
	assert.Equal(t, "cpu: 12500m\nmemory: 3Gi\nnvidia.com/gpu: \"6\"\n", spec(t, objs[0], "spec", "minResources"))
	for _, m := range members {
		assert.Equal(t, "volcano\n", spec(t, yaml.NewRNode(m.Template.Node()), "spec", "schedulerName"))
		assert.Equal(t, "pi\n", spec(t, yaml.NewRNode(m.Template.Node()), "metadata", "annotations", "scheduling.k8s.io/group-name"))
	}
}

func TestMinAvailableCountsTheFirstPods(t *testing.T) {
	policy := &Policy{MinAvailable: ptr.To[int32](2), ScheduleTimeoutSeconds: ptr.To[int32](30)}
	objs, _, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: policy, Members: launcherAndWorkers(t)}, options.Gang{Scheduler: options.SchedulerPlugins})
	require.Empty(t, errs)
	assert.Equal(t, "scheduling.x-k8s.io/v1alpha1", objs[0].GetApiVersion())
	assert.Equal(t, "2\n", spec(t, objs[0], "spec", "minMember"))
	assert.Equal(t, "30\n", spec(t, objs[0], "spec", "scheduleTimeoutSeconds"))
	// The launcher and one worker.
	assert.Equal(t, "cpu: 4500m\nmemory: 1Gi\nnvidia.com/gpu: \"2\"\n", spec(t, objs[0], "spec", "minResources"))
}

func TestPolicyResourcesWin(t *testing.T) {
	policy := &Policy{MinResources: map[string]resource.Quantity{"cpu": resource.MustParse("3")}}
	objs, _, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: policy, Members: launcherAndWorkers(t)}, options.Gang{Scheduler: options.Volcano})
	require.Empty(t, errs)
	assert.Equal(t, "cpu: \"3\"\n", spec(t, objs[0], "spec", "minResources"))
}

func TestNoSchedulerNoGang(t *testing.T) {
	members := launcherAndWorkers(t)
	objs, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: members}, options.Gang{})
	assert.Empty(t, objs)
	assert.Empty(t, warnings)
	assert.Empty(t, errs)
	assert.Empty(t, spec(t, yaml.NewRNode(members[0].Template.Node()), "spec", "schedulerName"))

	_, warnings, _ = Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: &Policy{Queue: "q"}, Members: members}, options.Gang{})
	require.Len(t, warnings, 1, "a policy without a scheduler is worth a word")
}

func TestGangLargerThanTheJob(t *testing.T) {
	_, _, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: &Policy{MinAvailable: ptr.To[int32](5)}, Members: launcherAndWorkers(t)}, options.Gang{Scheduler: options.Volcano})
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.runPolicy.schedulingPolicy.minAvailable", errs[0].Field)
}
