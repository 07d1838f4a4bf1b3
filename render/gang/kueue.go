package gang

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/ynode"
)

// What Kueue reads on a job or a pod (Kueue's "Run Plain Pods" and
// "MultiKueue" tasks).
const (
	kueueQueueLabel          = "kueue.x-k8s.io/queue-name"
	kueuePodGroupLabel       = "kueue.x-k8s.io/pod-group-name"
	kueuePodGroupTotalCount  = "kueue.x-k8s.io/pod-group-total-count"
	kueueRetriableInGroup    = "kueue.x-k8s.io/retriable-in-group"
	multiKueueControllerName = "kueue.x-k8s.io/multikueue"
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
		m.Template.AddLabels(map[string]string{kueueQueueLabel: queue, kueuePodGroupLabel: name}, true)
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
			return "its worker count changes at run time, and a pod group, which would make it one, has a fixed size"
		}
		if n, err := m.Workload.Pipe(yaml.Lookup("spec", "managedBy")); err == nil && n != nil && yaml.GetValue(n) == multiKueueControllerName {
			return "MultiKueue dispatches its Jobs to a worker cluster one by one"
		}
	}
	return ""
}

// queueWorkloads labels each workload with the queue, so Kueue admits
// each one as a Workload of its own, and says why: the job is then not
// one gang under Kueue.
func queueWorkloads(members []Member, queue, why string) ([]result.Warning, field.ErrorList) {
	for _, m := range members {
		if err := m.Workload.PipeE(yaml.LookupCreate(yaml.MappingNode, "metadata", "labels"),
			ynode.SetString(kueueQueueLabel, queue)); err != nil {
			return nil, field.ErrorList{field.InternalError(policyPath, err)}
		}
	}
	if len(members) < 2 {
		return nil, nil
	}
	return []result.Warning{{Field: policyPath.Child("queue"),
		Message: "Kueue admits this job as one Workload per Job or StatefulSet, not as one gang: " + why}}, nil
}
