// Package trainjob renders Kubeflow Trainer v2's TrainJob at build time,
// with the runtime it refers to resolved from the same input, into the
// plain objects Trainer and JobSet would create from it in the cluster:
// the runtime's replicated Jobs, a headless Service under which their pods
// have JobSet's hostnames, and the framework's files and environment
// (torchrun's PET_* variables, an MPI hostfile, JAX's and XGBoost's
// coordinator). Neither Trainer nor JobSet needs to be installed.
//
// The steps are Trainer v2.3.0's, in its order: the runtime's metadata and
// runtimePatches, the pod counts, the framework's policy, the initializers'
// and the trainer's overrides; then JobSet's part, the Jobs and their names.
package trainjob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// Job is what rendering needs to know of a TrainJob.
type Job struct {
	workload.Owner
	Spec Spec
	// Runtime is the runtime the job resolved to; nil when it resolved
	// to none, which Check reports.
	Runtime *runtimes.Runtime
	// resolveErr is why the runtime did not resolve.
	resolveErr error
	// LaunchMode is the run's MPI launch mode; Annotated when the job's
	// own annotation chose it.
	LaunchMode options.LaunchMode
	Annotated  bool
	// KubectlDeliveryImage brings kubectl to the launcher in the
	// KubectlExec launch mode; empty when the launcher's image has it.
	KubectlDeliveryImage string
}

// Spec is a TrainJob's spec, defaults filled in.
type Spec struct {
	RuntimeRef            runtimes.Ref   `json:"runtimeRef"`
	Initializer           *Initializer   `json:"initializer,omitempty"`
	Trainer               *Trainer       `json:"trainer,omitempty"`
	RuntimePatches        []RuntimePatch `json:"runtimePatches,omitempty"`
	Suspend               bool           `json:"suspend"`
	ActiveDeadlineSeconds *int64         `json:"activeDeadlineSeconds,omitempty"`
	ManagedBy             string         `json:"managedBy"`
}

// Initializer is spec.initializer.
type Initializer struct {
	Dataset *StorageInitializer `json:"dataset,omitempty"`
	Model   *StorageInitializer `json:"model,omitempty"`
}

// StorageInitializer is where an initializer reads from.
type StorageInitializer struct {
	StorageURI *string                      `json:"storageUri,omitempty"`
	Env        []corev1.EnvVar              `json:"env,omitempty"`
	SecretRef  *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// Trainer is spec.trainer: the overrides of the runtime's trainer node.
type Trainer struct {
	Image            *string                      `json:"image,omitempty"`
	Command          []string                     `json:"command,omitempty"`
	Args             []string                     `json:"args,omitempty"`
	Env              []corev1.EnvVar              `json:"env,omitempty"`
	NumNodes         *int32                       `json:"numNodes,omitempty"`
	ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`
	NumProcPerNode   *int32                       `json:"numProcPerNode,omitempty"`
}

// RuntimePatch is one manager's changes to the runtime for this job.
type RuntimePatch struct {
	Manager             string `json:"manager"`
	TrainingRuntimeSpec *struct {
		Template *struct {
			Metadata *runtimes.Meta `json:"metadata,omitempty"`
			Spec     map[string]any `json:"spec,omitempty"`
		} `json:"template,omitempty"`
	} `json:"trainingRuntimeSpec,omitempty"`
}

// managedByTrainer is the managedBy value naming Trainer's controller,
// whose place the render and the Kubernetes Job controller take here.
const managedByTrainer = "trainer.kubeflow.org/trainjob-controller"

// DecodeV1alpha1 reads a validated TrainJob and resolves its runtime
// among the runtimes of the input.
func DecodeV1alpha1(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	var spec Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	owner, err := workload.OwnerOf(v.Doc)
	if err != nil {
		return nil, nil, err
	}
	_, annotated := owner.Annotations[options.LaunchModeAnnotation]
	job := &Job{Owner: owner, Spec: spec, LaunchMode: opts.MPI.LaunchMode, Annotated: annotated,
		KubectlDeliveryImage: opts.MPI.KubectlDeliveryImage}
	job.Runtime, job.resolveErr = opts.Runtimes.Resolve(spec.RuntimeRef, owner.Namespace)
	return job, nil, nil
}
