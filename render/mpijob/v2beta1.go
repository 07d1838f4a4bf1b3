package mpijob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// v2beta1Spec is the part of a kubeflow.org/v2beta1 MPIJob spec, defaults
// filled in by the schema, that rendering reads; pod templates are read from
// the document as written.
type v2beta1Spec struct {
	SlotsPerWorker      int32                           `json:"slotsPerWorker"`
	RunLauncherAsWorker bool                            `json:"runLauncherAsWorker"`
	SSHAuthMountPath    string                          `json:"sshAuthMountPath"`
	MPIImplementation   string                          `json:"mpiImplementation"`
	RunPolicy           workload.RunPolicySpec          `json:"runPolicy"`
	MPIReplicaSpecs     map[string]workload.ReplicaSpec `json:"mpiReplicaSpecs"`
}

// mpiOperator is the managedBy value naming mpi-operator, whose place the
// Kubernetes Job controller takes here.
const mpiOperator = "kubeflow.org/mpi-operator"

// RenderV2beta1 renders a validated kubeflow.org/v2beta1 MPIJob.
func RenderV2beta1(v *schemas.Validated, opts options.Options) (render.Output, field.ErrorList) {
	job, warnings, err := fromV2beta1(v, opts)
	if err != nil {
		return render.Output{}, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	out, errs := Render(job)
	out.Warnings = append(warnings, out.Warnings...)
	return out, errs
}

func fromV2beta1(v *schemas.Validated, opts options.Options) (*Job, []render.Warning, error) {
	var spec v2beta1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	owner, err := workload.OwnerOf(v.Doc)
	if err != nil {
		return nil, nil, err
	}
	replicas, err := workload.Replicas(v.Doc, spec.MPIReplicaSpecs, "mpiReplicaSpecs", "Launcher", "Worker")
	if err != nil {
		return nil, nil, err
	}
	if replicas[0] == nil {
		return nil, nil, fmt.Errorf("spec.mpiReplicaSpecs has no Launcher")
	}
	policy, err := gang.PolicyOf(v)
	if err != nil {
		return nil, nil, err
	}
	job := &Job{
		Owner:               owner,
		Implementation:      mpi.Implementation(spec.MPIImplementation),
		SlotsPerWorker:      spec.SlotsPerWorker,
		RunLauncherAsWorker: spec.RunLauncherAsWorker,
		SSHAuthMountPath:    spec.SSHAuthMountPath,
		RunPolicy:           spec.RunPolicy.Policy(mpiOperator),
		Launcher:            *replicas[0],
		Worker:              replicas[1],
		SchedulingPolicy:    policy,
		Options:             opts,
	}
	return job, nil, nil
}
