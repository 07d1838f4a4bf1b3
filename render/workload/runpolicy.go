package workload

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// RunPolicy is the Kubeflow run policy every job kind shares: what the Jobs
// enforce, and the clean-up left to run time.
type RunPolicy struct {
	// CleanPodPolicy is None, Running or All.
	CleanPodPolicy          string
	BackoffLimit            *int32
	ActiveDeadlineSeconds   *int64
	TTLSecondsAfterFinished *int32
	Suspend                 bool
	// ManagedBy is the batch/v1 Job controller that runs the Jobs; empty
	// for Kubernetes' own.
	ManagedBy string
}

// JobSpec maps the run policy onto the fields of a batch/v1 Job spec, then
// adds the given fields (name, value, name, value, ...).
func (p RunPolicy) JobSpec(fields ...any) *yaml.Node {
	var suspend *bool
	if p.Suspend {
		suspend = &p.Suspend
	}
	var managedBy *string
	if p.ManagedBy != "" {
		managedBy = &p.ManagedBy
	}
	return ynode.Map(append([]any{
		"backoffLimit", p.BackoffLimit,
		"activeDeadlineSeconds", p.ActiveDeadlineSeconds,
		"ttlSecondsAfterFinished", p.TTLSecondsAfterFinished,
		"suspend", suspend,
		"managedBy", managedBy,
	}, fields...)...)
}

// RunPolicySpec is runPolicy as a Kubeflow job spec writes it, the schema's
// defaults filled in.
type RunPolicySpec struct {
	CleanPodPolicy          string `json:"cleanPodPolicy"`
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished"`
	ActiveDeadlineSeconds   *int64 `json:"activeDeadlineSeconds"`
	BackoffLimit            *int32 `json:"backoffLimit"`
	Suspend                 bool   `json:"suspend"`
	ManagedBy               string `json:"managedBy"`
}

// Policy is the run policy the rendered Jobs follow. A managedBy naming
// operator, the operator trainfn takes the place of, leaves the Jobs to
// Kubernetes' Job controller.
func (s RunPolicySpec) Policy(operator string) RunPolicy {
	p := RunPolicy{
		CleanPodPolicy:          s.CleanPodPolicy,
		BackoffLimit:            s.BackoffLimit,
		ActiveDeadlineSeconds:   s.ActiveDeadlineSeconds,
		TTLSecondsAfterFinished: s.TTLSecondsAfterFinished,
		Suspend:                 s.Suspend,
	}
	if s.ManagedBy != operator {
		p.ManagedBy = s.ManagedBy
	}
	return p
}

// DisruptionIgnored is a Job's podFailurePolicy under which a pod stopped
// by a disruption (evicted, preempted, its node drained) is made again
// without counting against the Job's backoffLimit. The Job's pods must have
// restartPolicy Never.
func DisruptionIgnored() *yaml.Node {
	return ynode.Map("rules", ynode.Seq(DisruptionRule()))
}

// DisruptionRule is DisruptionIgnored's rule, for a policy of more rules.
func DisruptionRule() *yaml.Node {
	return ynode.Map("action", "Ignore", "onPodConditions", ynode.Seq(ynode.Map("type", "DisruptionTarget")))
}
