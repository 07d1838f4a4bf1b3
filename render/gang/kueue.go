package gang

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/kueue"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// What Kueue reads on a job or a pod (Kueue's "Run Plain Pods" and
// "MultiKueue" tasks).
const (
	// KueuePodGroupLabel names a pod's Kueue pod group, and so the group's
	// Workload; gitops.Stamp makes it the job's revision's.
	KueuePodGroupLabel       = "kueue.x-k8s.io/pod-group-name"
	kueuePodGroupTotalCount  = "kueue.x-k8s.io/pod-group-total-count"
	kueueRetriableInGroup    = "kueue.x-k8s.io/retriable-in-group"
	multiKueueControllerName = "kueue.x-k8s.io/multikueue"
	// kueueElasticJob has Kueue resize a Job's Workload when the Job's
	// parallelism changes, through workload slices: a scale-up waits, its
	// new pods gated, until a slice of the new size is admitted.
	kueueElasticJob = "kueue.x-k8s.io/elastic-job"
)

// kueuePodGroup makes every pod of the job one Kueue pod group: one Workload,
// a PodSet per kind of pod (launcher or master, workers), admitted whole,
// so the quota covers the launcher too and a job is never half admitted.
// The Jobs carry no queue label: Kueue then leaves them to Kubernetes'
// Job controller and manages their pods, which it gates until the group
// is admitted. A pod the Job controller makes again joins the group.
//
// The group is not retriable in Kueue's sense: the Jobs retry the pods,
// and the group has ended once none of its pods runs. Kueue otherwise
// finishes a group only when every pod has succeeded, and a job's workers
// end as the job does, some stopped rather than succeeded: the quota
// would be held for good.
func kueuePodGroup(name string, members []Member, queue string, total int32) {
	for _, m := range members {
		m.Template.AddLabels(map[string]string{kueue.QueueLabel: queue, KueuePodGroupLabel: name}, true)
		m.Template.AddAnnotations(map[string]string{
			kueuePodGroupTotalCount: strconv.Itoa(int(total)),
			kueueRetriableInGroup:   "false",
		}, true)
	}
}

// workloadByWorkload says why Kueue must admit a job workload by workload,
// if it must: its pod count changes at run time, which a pod group, of a
// fixed count, cannot follow; or MultiKueue dispatches its Jobs to another
// cluster, which it does Job by Job.
func workloadByWorkload(members []Member) string {
	for _, m := range members {
		if m.Resized {
			return "its worker count changes at run time, which Kueue follows Job by Job, and a pod group, which would make it one, has a fixed size"
		}
		if n, err := m.Workload.Pipe(yaml.Lookup("spec", "managedBy")); err == nil && n != nil && yaml.GetValue(n) == multiKueueControllerName {
			return "MultiKueue dispatches its Jobs to a worker cluster one by one"
		}
	}
	return ""
}

// queueWorkloads labels each workload with the queue, and with the job's
// labels that describe its Workload (its priority, its time limit), so
// Kueue admits each one as a Workload of its own, and says why: the job is
// then not one gang under Kueue. A resized Job is an elastic Job to Kueue,
// whose Workload follows its size; Kueue refuses to resize a StatefulSet
// other than to or from zero, which the render says.
func queueWorkloads(members []Member, queue string, labels map[string]string, why string) ([]result.Warning, field.ErrorList) {
	labels = maps.Clone(labels)
	labels[kueue.QueueLabel] = queue
	var warnings []result.Warning
	for _, m := range members {
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			if err := m.Workload.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", "labels"),
				ynode.SetString(k, labels[k])); err != nil {
				return nil, field.ErrorList{field.InternalError(policyPath, err)}
			}
		}
		if !m.Resized {
			continue
		}
		switch m.Workload.GetKind() {
		case "Job":
			workload.Annotate(m.Workload, map[string]string{kueueElasticJob: "true"})
		case "StatefulSet":
			warnings = append(warnings, result.Warning{Field: policyPath.Child("queue"), Message: fmt.Sprintf(
				"Kueue refuses to resize the StatefulSet %s other than to or from zero: its worker count stays as it starts", m.Workload.GetName())})
		}
	}
	if len(members) < 2 {
		return warnings, nil
	}
	return append([]result.Warning{{Field: policyPath.Child("queue"),
		Message: "Kueue admits this job as one Workload per Job or StatefulSet, not as one gang: " + why}}, warnings...), nil
}

// defaultLocalQueue is the LocalQueue Kueue gives every Job and
// StatefulSet of its namespace that names none (Kueue's LocalQueue
// defaulting, "Setup default LocalQueue"), whose webhooks then label them
// with it.
const defaultLocalQueue = "default"

// defaultQueueWarnings say that a pod group queued on the LocalQueue
// "default" is split: that queue exists in the job's namespace, so Kueue
// labels each of the job's Jobs with it, and admits each on its own, its
// pods out of the group.
func defaultQueueWarnings(queue string, opts options.Gang) []result.Warning {
	if queue != defaultLocalQueue {
		return nil
	}
	at := policyPath.Child("queue")
	if opts.QueueLabel != "" {
		at = field.NewPath("metadata", "labels").Key(kueue.QueueLabel)
	}
	return []result.Warning{{Field: at, Message: "in a namespace with a LocalQueue named default, Kueue labels every Job that names no queue with it, " +
		"trainfn's Jobs included, whatever queue their pods name: each would be admitted as a Workload of its own, not the job as one; " +
		"run the job in a namespace without a LocalQueue named default"}}
}

// kueueGang queues the members on Kueue: as one pod group, or each Job as
// a Workload of its own where a pod group cannot hold them, which it says.
func kueueGang(owner workload.Owner, policy *Policy, members []Member, queue string, total int32, opts options.Gang) ([]result.Warning, field.ErrorList) {
	if queue == "" {
		return nil, field.ErrorList{field.Required(policyPath.Child("queue"),
			"Kueue admits a job through a LocalQueue: name it here or as gangScheduling.queue in trainfn's function config")}
	}
	var warnings []result.Warning
	if opts.SchedulerName != "" {
		warnings = setScheduler(members, opts.SchedulerName, "")
	}
	if why := workloadByWorkload(members); why != "" {
		split, errs := queueWorkloads(members, queue, kueue.WorkloadLabels(owner.Labels), why)
		if len(errs) > 0 {
			return nil, errs
		}
		warnings = append(warnings, split...)
	} else {
		kueuePodGroup(owner.Name, members, queue, total)
		warnings = append(warnings, defaultQueueWarnings(queue, opts)...)
	}
	if policy.PriorityClass != "" {
		for _, m := range members {
			m.Template.SetDefault("priorityClassName", ynode.String(policy.PriorityClass))
		}
	}
	return warnings, nil
}
