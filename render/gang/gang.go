// Package gang makes the pods of one job a gang: scheduled all together or
// not at all, by Volcano, scheduler-plugins' coscheduling, Kueue or
// Kubernetes' own scheduler. It works on the workloads a job kind has
// already rendered, so every kind shares it, and it renders nothing unless
// a gang scheduler is chosen.
package gang

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/kueue"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
	"github.com/trainfn/trainfn/schemas"
)

// Policy is Kubeflow's runPolicy.schedulingPolicy.
type Policy struct {
	MinAvailable           *int32                       `json:"minAvailable"`
	Queue                  string                       `json:"queue"`
	MinResources           map[string]resource.Quantity `json:"minResources"`
	PriorityClass          string                       `json:"priorityClass"`
	ScheduleTimeoutSeconds *int32                       `json:"scheduleTimeoutSeconds"`
	// NetworkTopology is a Trainer runtime's Volcano network topology,
	// which Trainer writes into the PodGroup; Kubeflow's runPolicy has
	// none.
	NetworkTopology *NetworkTopology `json:"-"`
	// VolcanoQueue is the queue a Trainer runtime's Volcano annotation
	// names: Volcano's only, never a LocalQueue of Kueue's, and before
	// the run's queue, as the policy's own.
	VolcanoQueue string `json:"-"`
}

// NetworkTopology is Volcano's PodGroup spec.networkTopology: how far
// apart, in tiers of the network, the gang's pods may be placed.
type NetworkTopology struct {
	Mode               string `json:"mode"`
	HighestTierAllowed int    `json:"highestTierAllowed"`
}

// PolicyOf reads the scheduling policy of a validated Kubeflow job spec; nil
// when it has none.
func PolicyOf(v *schemas.Validated) (*Policy, error) {
	at := v.Lookup("spec.runPolicy.schedulingPolicy")
	if !at.Exists() {
		return nil, nil
	}
	var p Policy
	if err := at.Decode(&p); err != nil {
		return nil, fmt.Errorf("reading %s: %w", policyPath, err)
	}
	return &p, nil
}

// Gang is what a job kind tells of its gang: the job, its scheduling
// policy (nil when the spec has none) and the workloads whose pods make it.
type Gang struct {
	Owner   workload.Owner
	Policy  *Policy
	Members []Member
}

// Member is one workload of the gang: a rendered Job or StatefulSet, its
// pod template (already part of it) and how many pods it runs at once.
type Member struct {
	Workload *yaml.RNode
	Template *pod.Template
	Pods     int32
	// Resized is a workload whose pod count changes at run time: Pods is
	// the count it starts with.
	Resized bool
	// PlacedTogether, if set, is called when the scheduler places every
	// pod of the gang at once (Volcano, scheduler-plugins, Kubernetes'
	// gang, each with the whole job as its minimum; not Kueue, which
	// admits by quota and leaves placing to kube-scheduler): a member that
	// waits for the others then knows, once it runs, that they were placed
	// too.
	PlacedTogether func()
}

// Labels, annotations and defaults the schedulers read.
const (
	volcanoGroupAnnotation      = "scheduling.k8s.io/group-name"
	volcanoSchedulerName        = "volcano"
	volcanoQueueAnnotation      = "scheduling.volcano.sh/queue-name"
	schedulerPluginsGroupLabel  = "scheduling.x-k8s.io/pod-group"
	schedulerPluginsDefaultName = "scheduler-plugins-scheduler"
)

// policyPath is where Kubeflow job specs keep the scheduling policy.
var policyPath = field.NewPath("spec", "runPolicy", "schedulingPolicy")

// Render makes the members one gang for the chosen scheduler: it edits
// their pod templates and returns the objects the scheduler needs besides
// (a PodGroup for Volcano and scheduler-plugins). The policy sets the
// group's size, queue, priority and resources.
func Render(g Gang, opts options.Gang) ([]*yaml.RNode, []result.Warning, field.ErrorList) {
	owner, policy, members := g.Owner, g.Policy, g.Members
	if errs := checkTopology(members); len(errs) > 0 {
		return nil, nil, errs
	}
	if opts.Scheduler == options.NoGang {
		if policy != nil {
			return nil, []result.Warning{{Field: policyPath, Message: fmt.Sprintf(
				"no gang scheduler is chosen, so the policy is validated, then ignored: name one (Volcano, SchedulerPlugins, Kueue or Kubernetes) "+
					"in the %s annotation or in the gangScheduling of trainfn's function config", options.GangSchedulerAnnotation)}}, nil
		}
		return nil, nil, nil
	}
	if policy == nil {
		policy = &Policy{}
	}
	total := int32(0)
	for _, m := range members {
		total += m.Pods
	}
	minMember := total
	if policy.MinAvailable != nil {
		minMember = *policy.MinAvailable
	}
	if minMember > total {
		return nil, nil, field.ErrorList{field.Invalid(policyPath.Child("minAvailable"), minMember,
			fmt.Sprintf("the job runs %d pods; a gang larger than the job would never be scheduled", total))}
	}
	queue, err := queueOf(policy, opts)
	if err != nil {
		return nil, nil, field.ErrorList{err}
	}

	// podGroup is the PodGroup of Volcano and scheduler-plugins, which
	// share its size and resources; fields are each one's own.
	podGroup := func(apiVersion string, fields ...any) []*yaml.RNode {
		spec := append([]any{"minMember", minMember, "minResources", minResources(policy, members, minMember)}, fields...)
		return []*yaml.RNode{owner.Object(apiVersion, "PodGroup", owner.Name, handoff.JobLabels(owner.Name), "spec", ynode.Map(spec...))}
	}

	var warnings []result.Warning
	var objects []*yaml.RNode
	together := minMember == total
	switch opts.Scheduler {
	case options.Volcano:
		if policy.Queue == "" && policy.VolcanoQueue != "" {
			queue = policy.VolcanoQueue
		}
		if queue == "" {
			// mpi-operator reads Volcano's own annotation on the job too.
			queue = owner.Annotations[volcanoQueueAnnotation]
		}
		priority := policy.PriorityClass
		if priority == "" {
			priority = templatePriority(members)
		}
		warnings = setScheduler(members, opts.SchedulerName, volcanoSchedulerName)
		for _, m := range members {
			m.Template.AddAnnotations(map[string]string{volcanoGroupAnnotation: owner.Name}, true)
		}
		var topology *yaml.Node
		if t := policy.NetworkTopology; t != nil {
			topology = ynode.Map("mode", t.Mode, "highestTierAllowed", t.HighestTierAllowed)
		}
		objects = podGroup("scheduling.volcano.sh/v1beta1", "queue", optional(queue), "priorityClassName", optional(priority), "networkTopology", topology)
	case options.SchedulerPlugins:
		warnings = setScheduler(members, opts.SchedulerName, schedulerPluginsDefaultName)
		for _, m := range members {
			m.Template.AddLabels(map[string]string{schedulerPluginsGroupLabel: owner.Name}, true)
		}
		objects = podGroup("scheduling.x-k8s.io/v1alpha1", "scheduleTimeoutSeconds", policy.ScheduleTimeoutSeconds)
	case options.Kubernetes:
		if opts.SchedulerName != "" {
			warnings = setScheduler(members, opts.SchedulerName, "")
		}
		var ignored []result.Warning
		objects, ignored = kubernetesGang(owner, policy, members, minMember)
		warnings = append(warnings, ignored...)
	case options.Kueue:
		// Kueue admits by quota, and kube-scheduler then places each pod
		// on its own: a launcher may run while its workers wait for room.
		together = false
		var errs field.ErrorList
		if warnings, errs = kueueGang(owner, policy, members, queue, total, opts); len(errs) > 0 {
			return nil, nil, errs
		}
	}
	for _, m := range members {
		if together && m.PlacedTogether != nil {
			m.PlacedTogether()
		}
	}
	return objects, warnings, nil
}

// queueOf is the job's queue: the LocalQueue of Kueue's label on the job,
// which Kueue reads, else the policy's, else the run's. A policy that
// names another queue than the label is refused: the job would be queued
// where its spec does not say.
func queueOf(policy *Policy, opts options.Gang) (string, *field.Error) {
	switch {
	case opts.QueueLabel == "":
	case policy.Queue == "" || policy.Queue == opts.QueueLabel:
		return opts.QueueLabel, nil
	default:
		return "", field.Invalid(policyPath.Child("queue"), policy.Queue, fmt.Sprintf(
			"the job's label %s names the LocalQueue %q, which Kueue reads: name the same queue in both, or only in the label", kueue.QueueLabel, opts.QueueLabel))
	}
	if policy.Queue != "" {
		return policy.Queue, nil
	}
	return opts.Queue, nil
}

// setScheduler names the scheduler on every pod template.
func setScheduler(members []Member, name, fallback string) []result.Warning {
	if name == "" {
		name = fallback
	}
	var warnings []result.Warning
	for _, m := range members {
		warnings = append(warnings, workload.Overridden(m.Template, "schedulerName", name, "the gang scheduler places the job's pods")...)
	}
	return warnings
}

// templatePriority is the first priorityClassName the pod templates set.
func templatePriority(members []Member) string {
	for _, m := range members {
		if n, err := yaml.NewRNode(m.Template.Node()).Pipe(yaml.Lookup("spec", "priorityClassName")); err == nil && n != nil {
			return yaml.GetValue(n)
		}
	}
	return ""
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// minResources is what the scheduler must find free before it starts the
// gang: the policy's own, else what the first minMember pods request, in
// the order the job's workloads start (launcher or master first).
func minResources(policy *Policy, members []Member, minMember int32) *yaml.Node {
	sum := corev1.ResourceList{}
	if policy.MinResources != nil {
		for k, q := range policy.MinResources {
			sum[corev1.ResourceName(k)] = q
		}
	} else {
		left := minMember
		for _, m := range members {
			n := min(left, m.Pods)
			left -= n
			for name, q := range podRequests(m.Template) {
				q.Mul(int64(n))
				total := sum[name]
				total.Add(q)
				sum[name] = total
			}
		}
	}
	if len(sum) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(sum)) {
		q := sum[name]
		if !q.IsZero() {
			out[string(name)] = q.String()
		}
	}
	if len(out) == 0 {
		return nil
	}
	return ynode.StringMap(out)
}

// podRequests is what one pod of the template asks the scheduler for, as
// Kubernetes counts it: requests, which default to limits, of the
// containers together, or of the largest init container if larger.
func podRequests(t *pod.Template) corev1.ResourceList {
	b, err := yaml.NewRNode(t.Node()).MarshalJSON()
	if err != nil {
		return nil
	}
	var spec corev1.PodTemplateSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		// The schema has accepted the template; a template the Kubernetes
		// types cannot read asks for nothing trainfn could count.
		return nil
	}
	p := &corev1.Pod{Spec: spec.Spec}
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			defaultRequests(&cs[i].Resources)
		}
	}
	if p.Spec.Resources != nil {
		defaultRequests(p.Spec.Resources)
	}
	return resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
}

// defaultRequests fills requests from limits, as the API server does.
func defaultRequests(r *corev1.ResourceRequirements) {
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			r.Requests[name] = q
		}
	}
}
