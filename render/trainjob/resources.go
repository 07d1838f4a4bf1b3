package trainjob

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/ynode"
)

// resourceErrors are the API server's rules for container resources,
// applied to the containers as the Jobs will carry them: the runtime's,
// with trainer.resourcesPerNode merged into the trainer's node. Trainer
// checks none of them, so a TrainJob that breaks one is admitted and its
// JobSet's Jobs are refused when created (an extended resource such as
// nvidia.com/gpu requested with no limit: the API server defaults a
// request from a limit, never a limit from a request). A resource the
// TrainJob names is reported in resourcesPerNode, any other in the
// runtime, where each can be fixed.
func (j *Job) resourceErrors(p *plan) field.ErrorList {
	var errs field.ErrorList
	for i, r := range p.spec.ReplicatedJobs {
		spec := p.podSpec(i)
		for _, list := range []struct {
			name       string
			containers []corev1.Container
		}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
			for c, container := range list.containers {
				merged := list.name == "containers" && container.Name == nodeName && j.mergesResources(p, r.Name, ancestor(r))
				for _, e := range j.containerResourceErrors(container.Resources, i, list.name, c, merged) {
					// An MPI launcher that is a node has the node Job's
					// merged resources: a problem of both is said once.
					if !slices.ContainsFunc(errs, func(o *field.Error) bool { return o.Error() == e.Error() }) {
						errs = append(errs, e)
					}
				}
			}
		}
	}
	return errs
}

// mergesResources tells whether a replicated job's node container takes
// trainer.resourcesPerNode (trainerResources).
func (j *Job) mergesResources(p *plan, job, ancestorStep string) bool {
	t := j.Spec.Trainer
	if t == nil || t.ResourcesPerNode == nil {
		return false
	}
	return ancestorStep == ancestorTrainer || p.launcherIsNode() && job == nodeName
}

func (j *Job) containerResourceErrors(r corev1.ResourceRequirements, job int, list string, c int, merged bool) field.ErrorList {
	node, err := ynode.FromTyped(r)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
	}
	inRuntime := field.NewPath("spec", "template", "spec", "replicatedJobs").Index(job).
		Child("template", "spec", "template", "spec").Child(list).Index(c).Child("resources")
	inJob := field.NewPath("spec", "trainer", "resourcesPerNode")
	var errs field.ErrorList
	for _, e := range pod.ContainerResourceErrors(node, inRuntime) {
		if merged && j.namesResource(e.Field) {
			e.Field = inJob.String() + strings.TrimPrefix(e.Field, inRuntime.String())
			errs = append(errs, e)
			continue
		}
		errs = append(errs, field.Invalid(field.NewPath("spec", "runtimeRef"), j.Spec.RuntimeRef.String(), fmt.Sprintf(
			"the runtime's %s (%s): %s", e.Field, j.Runtime.Source, e.ErrorBody())))
	}
	return errs
}

// namesResource tells whether the resource an error's path ends with is
// one the TrainJob's resourcesPerNode requests or limits.
func (j *Job) namesResource(path string) bool {
	open := strings.LastIndex(path, "[")
	if open < 0 || !strings.HasSuffix(path, "]") {
		return false
	}
	name := corev1.ResourceName(path[open+1 : len(path)-1])
	res := j.Spec.Trainer.ResourcesPerNode
	_, requested := res.Requests[name]
	_, limited := res.Limits[name]
	return requested || limited
}
