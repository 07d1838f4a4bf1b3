package mpijob

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// v1Spec is the part of a kubeflow.org/v1 MPIJob spec (training-operator's)
// that rendering reads, defaults filled in by the schema.
type v1Spec struct {
	SlotsPerWorker  int32                           `json:"slotsPerWorker"`
	MainContainer   string                          `json:"mainContainer"`
	RunPolicy       workload.RunPolicySpec          `json:"runPolicy"`
	MPIReplicaSpecs map[string]workload.ReplicaSpec `json:"mpiReplicaSpecs"`
}

// trainingOperator is the managedBy value naming training-operator.
const trainingOperator = "kubeflow.org/training-operator"

// RenderV1 renders a validated kubeflow.org/v1 MPIJob.
func RenderV1(v *schemas.Validated, opts options.Options) (render.Output, field.ErrorList) {
	job, err := fromV1(v, opts)
	if err != nil {
		return render.Output{}, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	out, errs := Render(job)
	out.Warnings = append(launchModeWarning(job, "training-operator"), out.Warnings...)
	return out, errs
}

func fromV1(v *schemas.Validated, opts options.Options) (*Job, error) {
	var spec v1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	owner, err := workload.OwnerOf(v.Doc)
	if err != nil {
		return nil, err
	}
	replicas, err := workload.Replicas(v.Doc, spec.MPIReplicaSpecs, "mpiReplicaSpecs", "Launcher", "Worker")
	if err != nil {
		return nil, err
	}
	if replicas[0] == nil {
		return nil, fmt.Errorf("spec.mpiReplicaSpecs has no Launcher")
	}
	policy, err := gang.PolicyOf(v)
	if err != nil {
		return nil, err
	}
	job := &Job{
		Owner:          owner,
		Implementation: mpi.OpenMPI,
		SlotsPerWorker: spec.SlotsPerWorker,
		// training-operator counts a launcher that asks for a GPU as the
		// hostfile's first host.
		RunLauncherAsWorker: asksForGPU(replicas[0].Template),
		SSHAuthMountPath:    "/root/.ssh",
		MainContainer:       spec.MainContainer,
		RunPolicy:           spec.RunPolicy.Policy(trainingOperator),
		Launcher:            *replicas[0],
		SchedulingPolicy:    policy,
		Options:             opts,
	}
	// Upstream's default is no worker at all: the launcher runs alone.
	if w := replicas[1]; w != nil && w.Replicas > 0 {
		job.Worker = w
	}
	return job, nil
}

// asksForGPU reads, as training-operator does, whether the template's first
// container has a GPU limit (nvidia.com/gpu, amd.com/gpu, ...).
func asksForGPU(template *yaml.RNode) bool {
	limits, err := template.Pipe(yaml.Lookup("spec", "containers", "0", "resources", "limits"))
	if err != nil || limits == nil {
		return false
	}
	fields, err := limits.Fields()
	if err != nil {
		return false
	}
	for _, name := range fields {
		if strings.HasSuffix(name, ".com/gpu") || strings.Contains(name, "gpu") {
			return true
		}
	}
	return false
}

// launchModeWarning tells users of an operator that started processes
// through kubectl exec that trainfn uses SSH unless asked otherwise.
func launchModeWarning(job *Job, operator string) []render.Warning {
	if job.kubectlExec() || job.Worker == nil {
		return nil
	}
	return []render.Warning{{
		Field: job.Worker.Path,
		Message: fmt.Sprintf("%s started processes on the workers through kubectl exec; trainfn uses SSH, so the worker image needs sshd and the job the Secret %s-ssh. "+
			"For an image without sshd, set the annotation %s: %s", operator, job.Name, options.LaunchModeAnnotation, options.KubectlExec),
	}}
}
