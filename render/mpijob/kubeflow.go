package mpijob

import (
	"fmt"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// kubeflowSpec is what mpi-operator's v2beta1 and training-operator's v1
// MPIJob specs share, defaults filled in by the schema; pod templates are
// read from the document as written.
type kubeflowSpec struct {
	SlotsPerWorker  int32                           `json:"slotsPerWorker"`
	RunPolicy       workload.RunPolicySpec          `json:"runPolicy"`
	MPIReplicaSpecs map[string]workload.ReplicaSpec `json:"mpiReplicaSpecs"`
}

// kubeflowJob reads the shared part of a validated v2beta1 or v1 MPIJob
// into a Job, OpenMPI over SSH as root until the version says otherwise.
// operator is the managedBy value naming the operator trainfn replaces.
func kubeflowJob(v *schemas.Validated, spec kubeflowSpec, operator string, opts options.Options) (*Job, error) {
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
	return &Job{
		Owner:            owner,
		Implementation:   mpi.OpenMPI,
		SlotsPerWorker:   spec.SlotsPerWorker,
		SSHAuthMountPath: "/root/.ssh",
		RunPolicy:        spec.RunPolicy.Policy(operator),
		Launcher:         *replicas[0],
		Worker:           replicas[1],
		SchedulingPolicy: policy,
		Options:          opts,
	}, nil
}
