package mpijob

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// v1alpha2Spec is the part of a kubeflow.org/v1alpha2 MPIJob spec
// (mpi-operator 0.2.x) that rendering reads, defaults filled in by the
// schema; pod templates are read from the document as written.
type v1alpha2Spec struct {
	SlotsPerWorker        int32  `json:"slotsPerWorker"`
	BackoffLimit          int32  `json:"backoffLimit"`
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds"`
	CleanPodPolicy        string `json:"cleanPodPolicy"`
	RunPolicy             *struct {
		CleanPodPolicy          *string `json:"cleanPodPolicy"`
		TTLSecondsAfterFinished *int32  `json:"ttlSecondsAfterFinished"`
		ActiveDeadlineSeconds   *int64  `json:"activeDeadlineSeconds"`
		BackoffLimit            *int32  `json:"backoffLimit"`
	} `json:"runPolicy"`
	MainContainer   string                         `json:"mainContainer"`
	MPIReplicaSpecs map[string]v1alpha2ReplicaSpec `json:"mpiReplicaSpecs"`
}

type v1alpha2ReplicaSpec struct {
	Replicas      int32   `json:"replicas"`
	RestartPolicy *string `json:"restartPolicy"`
}

// DecodeV1alpha2 reads a validated kubeflow.org/v1alpha2 MPIJob.
func DecodeV1alpha2(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	job, warnings, err := fromV1alpha2(v, opts)
	if err != nil {
		return nil, nil, err
	}
	return job, append(warnings, launchModeWarning(job, "mpi-operator v1alpha2")...), nil
}

func fromV1alpha2(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	var spec v1alpha2Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	specs := map[string]workload.ReplicaSpec{}
	var warnings []result.Warning
	for _, role := range slices.Sorted(maps.Keys(spec.MPIReplicaSpecs)) {
		rs := spec.MPIReplicaSpecs[role]
		restart, warning := v1alpha2RestartPolicy(role, rs.RestartPolicy)
		specs[role] = workload.ReplicaSpec{Replicas: rs.Replicas, RestartPolicy: restart}
		warnings = append(warnings, warning...)
	}
	run := workload.RunPolicySpec{CleanPodPolicy: spec.CleanPodPolicy, BackoffLimit: &spec.BackoffLimit, ActiveDeadlineSeconds: spec.ActiveDeadlineSeconds}
	if r := spec.RunPolicy; r != nil {
		// v0.2.3 let these two of a runPolicy win, and read neither its
		// clean-up nor its TTL.
		if r.BackoffLimit != nil {
			run.BackoffLimit = r.BackoffLimit
		}
		if r.ActiveDeadlineSeconds != nil {
			run.ActiveDeadlineSeconds = r.ActiveDeadlineSeconds
		}
		at := field.NewPath("spec", "runPolicy")
		if r.CleanPodPolicy != nil {
			warnings = append(warnings, result.Warning{Field: at.Child("cleanPodPolicy"),
				Message: "ignored, as mpi-operator v1alpha2 ignored it: the job's clean-up is spec.cleanPodPolicy (" + spec.CleanPodPolicy + ")"})
		}
		if r.TTLSecondsAfterFinished != nil {
			warnings = append(warnings, result.Warning{Field: at.Child("ttlSecondsAfterFinished"),
				Message: "ignored, as mpi-operator v1alpha2 ignored it: kubeflow.org/v2beta1's runPolicy.ttlSecondsAfterFinished is rendered"})
		}
	}
	// No managedBy in v1alpha2: the Jobs are Kubernetes' Job controller's.
	job, err := kubeflowJob(v, kubeflowSpec{SlotsPerWorker: spec.SlotsPerWorker, RunPolicy: run, MPIReplicaSpecs: specs}, "", opts)
	if err != nil {
		return nil, nil, err
	}
	job.MainContainer = spec.MainContainer
	job.PodLabels = func(role string) map[string]string { return v1alphaPodLabels(job.Name, role) }
	job.CleanPodPolicyPath = field.NewPath("spec", "cleanPodPolicy")
	job.DeadlinePath = field.NewPath("spec", "activeDeadlineSeconds")
	return job, warnings, nil
}

// v1alpha2RestartPolicy is the restart policy a role's pods get, as
// mpi-operator v1alpha2 gave them whatever the spec said: the launcher
// OnFailure unless Never. The workers, which the operator's StatefulSet
// restarted, are made again by their Job, as new pods (Never): a worker
// stopped mid-run must fail for it to be made again, which a pod failure
// policy tells apart only in pods never restarted in place.
func v1alpha2RestartPolicy(role string, written *string) (string, []result.Warning) {
	restart := "OnFailure"
	if role == "Worker" || written != nil && *written == "Never" {
		restart = "Never"
	}
	if written == nil || *written == restart {
		return restart, nil
	}
	why := "the launcher runs with OnFailure unless Never"
	if role == "Worker" {
		why = "the workers' Job makes a failed worker again as a new pod, as the operator's StatefulSet made them again"
	}
	return restart, []result.Warning{{Field: field.NewPath("spec", "mpiReplicaSpecs", role, "restartPolicy"),
		Message: fmt.Sprintf("replaced by %s, as mpi-operator v1alpha2 replaced it: %s", restart, why)}}
}

// mpi-operator's labels of the pods of kubeflow.org/v1alpha1 and v1alpha2
// MPIJobs: the group, the job's name and the pod's role.
const (
	mpiGroupNameLabel = "group_name"
	mpiJobNameLabel   = "mpi_job_name"
	mpiRoleTypeLabel  = "mpi_role_type"
)

// v1alphaPodLabels are what mpi-operator's v1alpha1 and v1alpha2
// controllers labelled the pods of one role of a job with.
func v1alphaPodLabels(job, role string) map[string]string {
	return map[string]string{mpiGroupNameLabel: "kubeflow.org", mpiJobNameLabel: job, mpiRoleTypeLabel: role}
}
