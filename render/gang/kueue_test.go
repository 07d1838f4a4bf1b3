package gang

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/workload"
)

func TestKueueGroupsEveryPodOfTheJob(t *testing.T) {
	members := launcherAndWorkers(t)
	objs, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: &Policy{PriorityClass: "low"}, Members: members}, options.Gang{Scheduler: options.Kueue, Queue: "team"})
	require.Empty(t, errs)
	assert.Empty(t, warnings)
	assert.Empty(t, objs, "Kueue needs no object of its own")
	for _, m := range members {
		assert.Empty(t, m.Workload.GetLabels()["kueue.x-k8s.io/queue-name"], "a labelled Job would be a Workload of its own")
		pod := yaml.NewRNode(m.Template.Node())
		assert.Equal(t, "team\n", spec(t, pod, "metadata", "labels", "kueue.x-k8s.io/queue-name"))
		assert.Equal(t, "pi\n", spec(t, pod, "metadata", "labels", "kueue.x-k8s.io/pod-group-name"))
		assert.Equal(t, "\"4\"\n", spec(t, pod, "metadata", "annotations", "kueue.x-k8s.io/pod-group-total-count"), "the launcher and 3 workers")
		assert.Equal(t, "\"false\"\n", spec(t, pod, "metadata", "annotations", "kueue.x-k8s.io/retriable-in-group"))
		assert.Equal(t, "low\n", spec(t, pod, "spec", "priorityClassName"))
	}
}

func TestKueueNeedsAQueue(t *testing.T) {
	_, _, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: launcherAndWorkers(t)}, options.Gang{Scheduler: options.Kueue})
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.runPolicy.schedulingPolicy.queue", errs[0].Field)
}

func TestKueueAdmitsAResizedJobWorkloadByWorkload(t *testing.T) {
	for name, change := range map[string]func(m []Member){
		"workers resized at run time": func(m []Member) { m[1].Resized = true },
		"Jobs dispatched by MultiKueue": func(m []Member) {
			for _, w := range m {
				require.NoError(t, w.Workload.PipeE(yaml.SetField("spec", yaml.NewMapRNode(&map[string]string{"managedBy": "kueue.x-k8s.io/multikueue"}))))
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			members := launcherAndWorkers(t)
			change(members)
			_, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: members}, options.Gang{Scheduler: options.Kueue, Queue: "team"})
			require.Empty(t, errs)
			require.Len(t, warnings, 1, "the job is not one gang under Kueue, and the render says so")
			assert.Contains(t, warnings[0].Message, "one Workload per Job or StatefulSet")
			for _, m := range members {
				assert.Equal(t, "team", m.Workload.GetLabels()["kueue.x-k8s.io/queue-name"])
				assert.Empty(t, spec(t, yaml.NewRNode(m.Template.Node()), "metadata", "labels", "kueue.x-k8s.io/pod-group-name"))
			}
		})
	}
}

func TestKueueResizesAResizedJobThroughWorkloadSlices(t *testing.T) {
	members := launcherAndWorkers(t)
	members[1].Resized = true
	_, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: members}, options.Gang{Scheduler: options.Kueue, Queue: "team"})
	require.Empty(t, errs)
	require.Len(t, warnings, 1)
	assert.Equal(t, "true", members[1].Workload.GetAnnotations()["kueue.x-k8s.io/elastic-job"], "Kueue follows the Job's size only when told it is elastic")
	assert.Empty(t, members[0].Workload.GetAnnotations()["kueue.x-k8s.io/elastic-job"], "the launcher's size never changes")
}

func TestKueueSaysItKeepsAResizedStatefulSetAsItStarts(t *testing.T) {
	members := launcherAndWorkers(t)
	members[1].Resized = true
	members[1].Workload.SetKind("StatefulSet")
	_, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: members}, options.Gang{Scheduler: options.Kueue, Queue: "team"})
	require.Empty(t, errs)
	require.Len(t, warnings, 2)
	assert.Contains(t, warnings[1].Message, "Kueue refuses to resize the StatefulSet w other than to or from zero")
	assert.Empty(t, members[1].Workload.GetAnnotations()["kueue.x-k8s.io/elastic-job"], "Kueue reads the annotation on Jobs alone")
}

// The job's own queue label is the queue Kueue reads: it wins over the
// run's, and a policy that names another queue is refused.
func TestKueuesQueueLabelIsTheJobsQueue(t *testing.T) {
	for name, c := range map[string]struct {
		policy *Policy
		want   string
	}{
		"over the run's":        {want: "user-queue"},
		"the policy's agreeing": {policy: &Policy{Queue: "user-queue"}, want: "user-queue"},
	} {
		t.Run(name, func(t *testing.T) {
			members := launcherAndWorkers(t)
			_, _, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: c.policy, Members: members},
				options.Gang{Scheduler: options.Kueue, Queue: "jobs", QueueLabel: "user-queue"})
			require.Empty(t, errs)
			for _, m := range members {
				assert.Equal(t, c.want+"\n", spec(t, yaml.NewRNode(m.Template.Node()), "metadata", "labels", "kueue.x-k8s.io/queue-name"))
			}
		})
	}
	_, _, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Policy: &Policy{Queue: "other"}, Members: launcherAndWorkers(t)},
		options.Gang{Scheduler: options.Kueue, QueueLabel: "user-queue"})
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.runPolicy.schedulingPolicy.queue", errs[0].Field)
	assert.Contains(t, errs[0].Error(), `the job's label kueue.x-k8s.io/queue-name names the LocalQueue "user-queue"`)
}

// A job Kueue admits Job by Job gives each Job the labels that describe a
// Workload, its priority and time limit, as the operator's job had them:
// Kueue reads them on what it admits.
func TestKueueGivesEachQueuedJobTheJobsWorkloadLabels(t *testing.T) {
	members := launcherAndWorkers(t)
	members[1].Resized = true
	owner := workload.Owner{Name: "pi", Labels: map[string]string{
		"kueue.x-k8s.io/queue-name":     "user-queue",
		"kueue.x-k8s.io/priority-class": "low",
		"kueue.x-k8s.io/pod-group-name": "mine",
		"team":                          "a",
	}}
	_, _, errs := Render(Gang{Owner: owner, Members: members}, options.Gang{Scheduler: options.Kueue, QueueLabel: "user-queue"})
	require.Empty(t, errs)
	for _, m := range members {
		labels := m.Workload.GetLabels()
		assert.Equal(t, "user-queue", labels["kueue.x-k8s.io/queue-name"])
		assert.Equal(t, "low", labels["kueue.x-k8s.io/priority-class"])
		assert.NotContains(t, labels, "kueue.x-k8s.io/pod-group-name", "a Job is not a pod group")
	}
}

// Kueue labels every Job of a namespace with a LocalQueue named default
// that names no queue: a pod group queued there would be split Job by Job.
func TestKueueWarnsOfTheDefaultLocalQueue(t *testing.T) {
	_, warnings, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: launcherAndWorkers(t)},
		options.Gang{Scheduler: options.Kueue, QueueLabel: "default"})
	require.Empty(t, errs)
	require.Len(t, warnings, 1)
	assert.Equal(t, "metadata.labels[kueue.x-k8s.io/queue-name]", warnings[0].Field.String())
	assert.Contains(t, warnings[0].Message, "Kueue labels every Job that names no queue with it")
}
