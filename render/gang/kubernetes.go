package gang

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// kubernetesPodGroupAPI is the PodGroup of Kubernetes 1.37, which
// kube-scheduler's GangScheduling plugin reads (KEP-4671, feature gate
// GenericWorkload).
const kubernetesPodGroupAPI = "scheduling.k8s.io/v1beta1"

// kubernetesGang makes the job one gang of Kubernetes' own scheduler: a
// PodGroup <job> whose gang policy needs minMember pods, and every pod
// template naming it in spec.schedulingGroup. The scheduler binds none of
// the group's pods until it can place minMember of them at once, launcher
// or master included: one group spans all of the job's Jobs, which a Job's
// own spec.scheduling, a group per Job, would not. No Workload object is
// rendered: the scheduler reads the PodGroup alone.
func kubernetesGang(owner workload.Owner, policy *Policy, members []Member, minMember int32) ([]*yaml.RNode, []result.Warning) {
	var warnings []result.Warning
	if policy.ScheduleTimeoutSeconds != nil {
		warnings = append(warnings, result.Warning{Field: policyPath.Child("scheduleTimeoutSeconds"),
			Message: "Kubernetes' gang scheduling has no timeout of its own to set (kube-scheduler holds a gang's pods 5 minutes at most, then tries again): ignored"})
	}
	if len(policy.MinResources) > 0 {
		warnings = append(warnings, result.Warning{Field: policyPath.Child("minResources"),
			Message: "Kubernetes' gang scheduling counts pods, not resources: ignored"})
	}
	for _, m := range members {
		if replaced := m.Template.Set("schedulingGroup", ynode.Map("podGroupName", owner.Name)); replaced != nil {
			if n, err := yaml.NewRNode(replaced).Pipe(yaml.Lookup("podGroupName")); err != nil || n == nil || yaml.GetValue(n) != owner.Name {
				warnings = append(warnings, result.Warning{Field: m.Template.Path("schedulingGroup"),
					Message: "replaced by podGroupName " + owner.Name + ": the job's pods are one gang, its PodGroup"})
			}
		}
		if policy.PriorityClass != "" {
			m.Template.SetDefault("priorityClassName", ynode.String(policy.PriorityClass))
		}
	}
	group := owner.Object(kubernetesPodGroupAPI, "PodGroup", owner.Name, handoff.JobLabels(owner.Name),
		"spec", ynode.Map("schedulingPolicy", ynode.Map("gang", ynode.Map("minCount", minMember))))
	return []*yaml.RNode{group}, warnings
}
