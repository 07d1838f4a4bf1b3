package mpijob

import (
	"fmt"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/schemas"
)

// v2beta1Spec is the part of a kubeflow.org/v2beta1 MPIJob spec, defaults
// filled in by the schema, that rendering reads; pod templates are read from
// the document as written.
type v2beta1Spec struct {
	kubeflowSpec
	RunLauncherAsWorker bool   `json:"runLauncherAsWorker"`
	SSHAuthMountPath    string `json:"sshAuthMountPath"`
	MPIImplementation   string `json:"mpiImplementation"`
}

// mpiOperator is the managedBy value naming mpi-operator, whose place the
// Kubernetes Job controller takes here.
const mpiOperator = "kubeflow.org/mpi-operator"

// DecodeV2beta1 reads a validated kubeflow.org/v2beta1 MPIJob.
func DecodeV2beta1(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	job, err := fromV2beta1(v, opts)
	return job, nil, err
}

func fromV2beta1(v *schemas.Validated, opts options.Options) (*Job, error) {
	var spec v2beta1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	job, err := kubeflowJob(v, spec.kubeflowSpec, mpiOperator, opts)
	if err != nil {
		return nil, err
	}
	job.Implementation = mpi.Implementation(spec.MPIImplementation)
	job.RunLauncherAsWorker = spec.RunLauncherAsWorker
	if job.RunLauncherAsWorker {
		// The launcher is the hostfile's first host, index 0, as
		// mpi-operator labels it; its workers' indexes then start at 1,
		// which their Indexed Job's completion index cannot say.
		job.PodLabels = func(role string) map[string]string {
			if role == handoff.RoleLauncher {
				return map[string]string{handoff.ReplicaIndexLabel: "0"}
			}
			return nil
		}
	}
	job.SSHAuthMountPath = spec.SSHAuthMountPath
	job.DiscoverFormat = handoff.HostOnly
	return job, nil
}
