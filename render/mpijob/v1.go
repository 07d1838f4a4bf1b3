package mpijob

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/schemas"
)

// v1Spec is the part of a kubeflow.org/v1 MPIJob spec (training-operator's)
// that rendering reads, defaults filled in by the schema.
type v1Spec struct {
	kubeflowSpec
	MainContainer string `json:"mainContainer"`
}

// trainingOperator is the managedBy value naming training-operator.
const trainingOperator = "kubeflow.org/training-operator"

// DecodeV1 reads a validated kubeflow.org/v1 MPIJob.
func DecodeV1(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	job, err := fromV1(v, opts)
	if err != nil {
		return nil, nil, err
	}
	return job, launchModeWarning(job, "training-operator"), nil
}

func fromV1(v *schemas.Validated, opts options.Options) (*Job, error) {
	var spec v1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	job, err := kubeflowJob(v, spec.kubeflowSpec, trainingOperator, opts)
	if err != nil {
		return nil, err
	}
	job.MainContainer = spec.MainContainer
	job.PodLabels = trainingOperatorLabels
	// training-operator counts a launcher that asks for a GPU as the
	// hostfile's first host.
	job.RunLauncherAsWorker = asksForGPU(job.Launcher.Template)
	// Upstream's default is no worker at all: the launcher runs alone.
	if job.Worker != nil && job.Worker.Replicas == 0 {
		job.Worker = nil
	}
	return job, nil
}

// trainingOperatorLabels are the labels training-operator puts on an
// MPIJob's pods besides the job's name: the replica type, and the master
// role for the launcher, which its job-role says.
func trainingOperatorLabels(role string) map[string]string {
	l := map[string]string{handoff.ReplicaTypeLabel: role}
	if role == handoff.RoleLauncher {
		l[handoff.JobRoleLabel] = handoff.RoleMaster
	}
	return l
}

// asksForGPU reads, as training-operator does, whether a container of the
// template has a GPU limit (nvidia.com/gpu, amd.com/gpu, ...).
func asksForGPU(template *yaml.RNode) bool {
	containers, err := template.Pipe(yaml.Lookup("spec", "containers"))
	if err != nil || containers == nil {
		return false
	}
	for _, c := range containers.Content() {
		limits, err := yaml.NewRNode(c).Pipe(yaml.Lookup("resources", "limits"))
		if err != nil || limits == nil {
			continue
		}
		names, err := limits.Fields()
		if err == nil && slices.ContainsFunc(names, func(name string) bool { return strings.Contains(name, "gpu") }) {
			return true
		}
	}
	return false
}

// launchModeWarning tells users of an operator that started processes
// through kubectl exec that trainfn uses SSH unless asked otherwise.
func launchModeWarning(job *Job, operator string) []result.Warning {
	if job.launchMode() != options.SSH || job.Worker == nil {
		return nil
	}
	return []result.Warning{{
		Field: job.Worker.Path,
		Message: fmt.Sprintf("%s started processes on the workers through kubectl exec; trainfn uses SSH, so the worker image needs sshd and the job the Secret %s-ssh. "+
			"For an image without sshd, set the annotation %s: %s", operator, job.Name, options.LaunchModeAnnotation, options.KubectlExec),
	}}
}
