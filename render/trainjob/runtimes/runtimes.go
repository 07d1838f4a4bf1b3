// Package runtimes resolves a TrainJob's runtimeRef at build time, against
// the TrainingRuntimes and ClusterTrainingRuntimes of the same input, as
// Kubeflow Trainer resolves it in the cluster when the TrainJob runs.
// Resolved here, the runtime is pinned by the commit that holds both, and
// a change to it shows in the diff of every job that uses it.
package runtimes

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Group is Kubeflow Trainer's API group, and APIVersion the version of it
// trainfn reads.
const (
	Group      = "trainer.kubeflow.org"
	APIVersion = Group + "/v1alpha1"
)

// The kinds of runtime a TrainJob refers to.
const (
	TrainingRuntime        = "TrainingRuntime"
	ClusterTrainingRuntime = "ClusterTrainingRuntime"
)

// IsRuntime tells whether a document is a runtime: one the input holds for
// its TrainJobs, not an object to apply.
func IsRuntime(apiVersion, kind string) bool {
	return apiVersion == APIVersion && (kind == TrainingRuntime || kind == ClusterTrainingRuntime)
}

// Runtime is a runtime of the input, validated and defaulted.
type Runtime struct {
	Kind string
	// Namespace is empty for a ClusterTrainingRuntime, and for a
	// TrainingRuntime written without one.
	Namespace, Name string
	// Labels are the runtime's own: Trainer warns of a deprecated one.
	Labels map[string]string
	Spec   Spec
	// Source says where the runtime was read, for messages.
	Source string
	// Invalid is a runtime its schema refused, reported where it is
	// written; a TrainJob of it is not rendered.
	Invalid bool
}

// Spec is a runtime's spec as Trainer v2.3.0 defines it.
type Spec struct {
	MLPolicy       *MLPolicy       `json:"mlPolicy,omitempty"`
	PodGroupPolicy *PodGroupPolicy `json:"podGroupPolicy,omitempty"`
	Template       JobSetTemplate  `json:"template"`
}

// MLPolicy is how the runtime's framework is set up; at most one source.
type MLPolicy struct {
	NumNodes *int32       `json:"numNodes,omitempty"`
	Torch    *TorchPolicy `json:"torch,omitempty"`
	MPI      *MPIPolicy   `json:"mpi,omitempty"`
	Flux     *FluxPolicy  `json:"flux,omitempty"`
	JAX      *struct{}    `json:"jax,omitempty"`
	XGBoost  *struct{}    `json:"xgboost,omitempty"`
}

// TorchPolicy is mlPolicy.torch.
type TorchPolicy struct {
	EnvInjection *struct {
		Targets []struct {
			JobName        string   `json:"jobName"`
			ContainerNames []string `json:"containerNames"`
		} `json:"targets,omitempty"`
	} `json:"envInjection,omitempty"`
}

// MPIPolicy is mlPolicy.mpi, defaults filled in.
type MPIPolicy struct {
	NumProcPerNode    int32  `json:"numProcPerNode"`
	MPIImplementation string `json:"mpiImplementation"`
	SSHAuthMountPath  string `json:"sshAuthMountPath"`
	RunLauncherAsNode bool   `json:"runLauncherAsNode"`
}

// FluxPolicy is mlPolicy.flux.
type FluxPolicy struct {
	NumProcPerNode int32 `json:"numProcPerNode"`
}

// PodGroupPolicy is the runtime's gang scheduling.
type PodGroupPolicy struct {
	Coscheduling *struct {
		ScheduleTimeoutSeconds int32 `json:"scheduleTimeoutSeconds"`
	} `json:"coscheduling,omitempty"`
	Volcano *struct {
		NetworkTopology *struct {
			Mode               string `json:"mode"`
			HighestTierAllowed int    `json:"highestTierAllowed"`
		} `json:"networkTopology,omitempty"`
	} `json:"volcano,omitempty"`
}

// JobSetTemplate is the runtime's JobSet template.
type JobSetTemplate struct {
	Metadata Meta       `json:"metadata"`
	Spec     JobSetSpec `json:"spec"`
}

// Meta is the metadata of a template embedded in Trainer's objects.
type Meta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// JobSetSpec mirrors JobSet v0.12.0's spec, struct tags included:
// strategic merge patches of it (runtimePatches) merge as they merge the
// JobSet's own.
type JobSetSpec struct {
	ReplicatedJobs          []ReplicatedJob     `json:"replicatedJobs,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Network                 *Network            `json:"network,omitempty"`
	SuccessPolicy           *SuccessPolicy      `json:"successPolicy,omitempty"`
	FailurePolicy           *FailurePolicy      `json:"failurePolicy,omitempty"`
	StartupPolicy           *StartupPolicy      `json:"startupPolicy,omitempty"`
	Suspend                 *bool               `json:"suspend,omitempty"`
	Coordinator             *Coordinator        `json:"coordinator,omitempty"`
	ManagedBy               *string             `json:"managedBy,omitempty"`
	TTLSecondsAfterFinished *int32              `json:"ttlSecondsAfterFinished,omitempty"`
	VolumeClaimPolicies     []VolumeClaimPolicy `json:"volumeClaimPolicies,omitempty"`
}

// ReplicatedJob is a group of identical Jobs of the JobSet.
type ReplicatedJob struct {
	Name      string                  `json:"name"`
	GroupName string                  `json:"groupName,omitempty"`
	Template  batchv1.JobTemplateSpec `json:"template"`
	Replicas  int32                   `json:"replicas,omitempty"`
	DependsOn []DependsOn             `json:"dependsOn,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

// DependsOn is a replicated job that must reach a status first.
type DependsOn struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Network is how the JobSet's pods are named.
type Network struct {
	EnableDNSHostnames       *bool  `json:"enableDNSHostnames,omitempty"`
	Subdomain                string `json:"subdomain,omitempty"`
	PublishNotReadyAddresses *bool  `json:"publishNotReadyAddresses,omitempty"`
}

// SuccessPolicy is when the JobSet succeeds.
type SuccessPolicy struct {
	Operator             string   `json:"operator"`
	TargetReplicatedJobs []string `json:"targetReplicatedJobs,omitempty"`
}

// FailurePolicy is what the JobSet does when a Job fails.
type FailurePolicy struct {
	MaxRestarts     int32               `json:"maxRestarts,omitempty"`
	RestartStrategy string              `json:"restartStrategy,omitempty"`
	Rules           []FailurePolicyRule `json:"rules,omitempty"`
}

// FailurePolicyRule is one rule of the failure policy.
type FailurePolicyRule struct {
	Name                        string   `json:"name"`
	Action                      string   `json:"action"`
	OnJobFailureReasons         []string `json:"onJobFailureReasons,omitempty"`
	OnJobFailureMessagePatterns []string `json:"onJobFailureMessagePatterns,omitempty"`
	TargetReplicatedJobs        []string `json:"targetReplicatedJobs,omitempty"`
}

// StartupPolicy is the order the replicated jobs start in.
type StartupPolicy struct {
	StartupPolicyOrder string `json:"startupPolicyOrder"`
}

// Coordinator names the pod the JobSet labels as its coordinator.
type Coordinator struct {
	ReplicatedJob string `json:"replicatedJob"`
	JobIndex      int    `json:"jobIndex,omitempty"`
	PodIndex      int    `json:"podIndex,omitempty"`
}

// VolumeClaimPolicy is claims the JobSet creates for its Jobs.
type VolumeClaimPolicy struct {
	Templates       []corev1.PersistentVolumeClaim `json:"templates,omitempty"`
	RetentionPolicy *struct {
		WhenDeleted string `json:"whenDeleted,omitempty"`
	} `json:"retentionPolicy,omitempty"`
}

// Ref is a TrainJob's runtimeRef, defaults filled in.
type Ref struct {
	Name     string `json:"name"`
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
}

func (r Ref) String() string { return r.Kind + " " + r.Name }

// Catalog is the runtimes of one input.
type Catalog []*Runtime

// Resolve finds the runtime a TrainJob in namespace refers to, as Trainer
// does: a ClusterTrainingRuntime by name; a TrainingRuntime by name in the
// TrainJob's own namespace. An input whose documents carry no namespace
// (one kustomize or kubectl -n places later) matches those as written: a
// TrainJob without one finds a TrainingRuntime without one. The error
// names what was looked for, and what the input has instead.
func (c Catalog) Resolve(ref Ref, namespace string) (*Runtime, error) {
	if ref.APIGroup != Group || (ref.Kind != TrainingRuntime && ref.Kind != ClusterTrainingRuntime) {
		return nil, fmt.Errorf("refers to %s %s of group %q: a TrainJob runs a %s or a %s of group %s",
			ref.Kind, ref.Name, ref.APIGroup, ClusterTrainingRuntime, TrainingRuntime, Group)
	}
	var found, elsewhere []*Runtime
	for _, r := range c {
		if r.Kind != ref.Kind || r.Name != ref.Name {
			continue
		}
		if r.Kind == TrainingRuntime && r.Namespace != namespace {
			elsewhere = append(elsewhere, r)
			continue
		}
		found = append(found, r)
	}
	switch {
	case len(found) == 1 && found[0].Invalid:
		return nil, fmt.Errorf("%s (%s) is not valid: see its errors", ref, found[0].Source)
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return nil, fmt.Errorf("%s is defined %d times in the input (%s): keep one", ref, len(found), sources(found))
	case len(elsewhere) > 0:
		return nil, fmt.Errorf("no %s in namespace %q in the input; a TrainingRuntime is found only in its TrainJob's namespace, and the input has it in %s",
			ref, namespace, namespaces(elsewhere))
	}
	msg := fmt.Sprintf("no %s in the input: trainfn resolves a runtime at build time, from the documents rendered with the TrainJob "+
		"(files given to trainfn render, a kustomization's resources, a kpt package, a chart's templates); add the runtime's manifest "+
		"(Kubeflow Trainer's own are in its manifests/base/runtimes)", ref)
	if names := c.names(ref.Kind); len(names) > 0 {
		msg += fmt.Sprintf("; the input has %s %s", ref.Kind, strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%s", msg)
}

func (c Catalog) names(kind string) []string {
	var out []string
	for _, r := range c {
		if r.Kind == kind && !slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

func sources(rs []*Runtime) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.Source
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

func namespaces(rs []*Runtime) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprintf("%q", r.Namespace)
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ", ")
}
