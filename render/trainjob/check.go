package trainjob

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
)

// Check reports what the schema cannot say: the runtime the job refers
// to, and the limits of the names JobSet derives from the job's.
func (j *Job) Check() field.ErrorList {
	at := field.NewPath("spec", "runtimeRef")
	if j.resolveErr != nil {
		return field.ErrorList{field.Invalid(at, j.Spec.RuntimeRef.String(), j.resolveErr.Error())}
	}
	if m := j.Runtime.Spec.MLPolicy; m != nil && m.Flux != nil {
		return field.ErrorList{field.Invalid(at, j.Spec.RuntimeRef.String(), "the runtime's mlPolicy flux is not supported by trainfn yet")}
	}
	var errs field.ErrorList
	rjobs := j.Runtime.Spec.Template.Spec.ReplicatedJobs
	for i, r := range rjobs {
		for _, d := range r.DependsOn {
			// JobSet's webhook: the first replicated job depends on none,
			// and the others on replicated jobs that exist.
			if k := slices.IndexFunc(rjobs, func(o runtimes.ReplicatedJob) bool { return o.Name == d.Name }); k < 0 || k >= i {
				errs = append(errs, field.Invalid(at, j.Spec.RuntimeRef.String(), fmt.Sprintf(
					"replicated job %s of the runtime depends on %s, which is not a replicated job listed before it", r.Name, d.Name)))
			}
		}
	}
	for _, r := range rjobs {
		// JobSet refuses a JobSet whose longest pod name, with the Job
		// controller's random suffix, passes 63 characters.
		longest := fmt.Sprintf("%s-%s-%d-%d-abcde", j.Name, r.Name, max(r.Replicas-1, 0), 0)
		if len(longest) > 63 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), j.Name, fmt.Sprintf(
				"too long for the runtime's replicated job %s: its pods are named %s-<podIndex>-<random>, more than 63 characters", r.Name, longest[:len(longest)-8])))
		}
	}
	return errs
}

// warnings tell what renders but differs from Trainer's run.
func (j *Job) warnings(p *plan) []result.Warning {
	var out []result.Warning
	at := field.NewPath("spec", "runtimeRef")
	if j.Runtime.Labels["trainer.kubeflow.org/support"] == "deprecated" {
		out = append(out, result.Warning{Field: at, Message: fmt.Sprintf("%s is deprecated by its authors", j.Spec.RuntimeRef)})
	}
	if sp := p.spec.StartupPolicy; sp != nil && sp.StartupPolicyOrder == "InOrder" {
		out = append(out, result.Warning{Field: at, Message: "the runtime's startupPolicy InOrder is not enforced: its replicated jobs start together; order them with dependsOn"})
	}
	out = append(out, p.warnings...)
	if fp := p.spec.FailurePolicy; fp != nil && (fp.MaxRestarts > 0 || len(fp.Rules) > 0) {
		out = append(out, result.Warning{Field: at, Message: "the runtime's failurePolicy is not rendered: no Job restarts the others; each Job retries its pods by its own backoffLimit"})
	}
	return out
}

// GangOptions choose the gang scheduler the runtime's podGroupPolicy
// names, as Trainer's coscheduling and Volcano plugins do, when the run
// chooses none: scheduler-plugins' coscheduling, or Volcano.
func (j *Job) GangOptions(o options.Gang) options.Gang {
	if o.Scheduler != options.NoGang || j.Runtime == nil || j.Runtime.Spec.PodGroupPolicy == nil {
		return o
	}
	switch pg := j.Runtime.Spec.PodGroupPolicy; {
	case pg.Coscheduling != nil:
		o.Scheduler = options.SchedulerPlugins
	case pg.Volcano != nil:
		o.Scheduler = options.Volcano
	}
	return o
}

// gangPolicy is the runtime's pod group policy, for the gang scheduler
// the job renders with.
func (j *Job) gangPolicy(p *plan) *gang.Policy {
	pg := p.podGroupPolicy
	if pg == nil {
		return nil
	}
	var policy gang.Policy
	if c := pg.Coscheduling; c != nil {
		timeout := c.ScheduleTimeoutSeconds
		policy.ScheduleTimeoutSeconds = &timeout
	}
	if v := pg.Volcano; v != nil {
		policy.VolcanoQueue = p.annotations[volcanoQueueAnnotation]
		if t := v.NetworkTopology; t != nil {
			// As Trainer's Volcano plugin writes it (volcano.go:199-203).
			policy.NetworkTopology = &gang.NetworkTopology{Mode: t.Mode, HighestTierAllowed: t.HighestTierAllowed}
		}
	}
	return &policy
}
