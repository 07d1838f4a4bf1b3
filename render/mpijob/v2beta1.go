package mpijob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// v2beta1Spec is the part of a kubeflow.org/v2beta1 MPIJob spec, defaults
// filled in by the schema, that rendering reads; pod templates are read from
// the document as written.
type v2beta1Spec struct {
	SlotsPerWorker      int32  `json:"slotsPerWorker"`
	RunLauncherAsWorker bool   `json:"runLauncherAsWorker"`
	SSHAuthMountPath    string `json:"sshAuthMountPath"`
	MPIImplementation   string `json:"mpiImplementation"`
	RunPolicy           struct {
		CleanPodPolicy          string `json:"cleanPodPolicy"`
		TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished"`
		ActiveDeadlineSeconds   *int64 `json:"activeDeadlineSeconds"`
		BackoffLimit            *int32 `json:"backoffLimit"`
		Suspend                 bool   `json:"suspend"`
		ManagedBy               string `json:"managedBy"`
	} `json:"runPolicy"`
	MPIReplicaSpecs map[string]struct {
		Replicas      int32  `json:"replicas"`
		RestartPolicy string `json:"restartPolicy"`
	} `json:"mpiReplicaSpecs"`
}

// mpiOperator is the managedBy value naming mpi-operator, whose place the
// Kubernetes Job controller takes here.
const mpiOperator = "kubeflow.org/mpi-operator"

// RenderV2beta1 renders a validated kubeflow.org/v2beta1 MPIJob.
func RenderV2beta1(v *schemas.Validated) (render.Output, field.ErrorList) {
	job, warnings, err := fromV2beta1(v)
	if err != nil {
		return render.Output{}, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	out, errs := Render(job)
	out.Warnings = append(warnings, out.Warnings...)
	return out, errs
}

func fromV2beta1(v *schemas.Validated) (*Job, []render.Warning, error) {
	var spec v2beta1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	meta, err := v.Doc.GetMeta()
	if err != nil {
		return nil, nil, err
	}
	job := &Job{
		Owner: workload.Owner{
			Name:        meta.Name,
			Namespace:   meta.Namespace,
			Labels:      meta.Labels,
			Annotations: meta.Annotations,
		},
		Implementation:      mpi.Implementation(spec.MPIImplementation),
		SlotsPerWorker:      spec.SlotsPerWorker,
		RunLauncherAsWorker: spec.RunLauncherAsWorker,
		SSHAuthMountPath:    spec.SSHAuthMountPath,
		RunPolicy: workload.RunPolicy{
			CleanPodPolicy:          spec.RunPolicy.CleanPodPolicy,
			BackoffLimit:            spec.RunPolicy.BackoffLimit,
			ActiveDeadlineSeconds:   spec.RunPolicy.ActiveDeadlineSeconds,
			TTLSecondsAfterFinished: spec.RunPolicy.TTLSecondsAfterFinished,
			Suspend:                 spec.RunPolicy.Suspend,
		},
	}
	if spec.RunPolicy.ManagedBy != mpiOperator {
		job.RunPolicy.ManagedBy = spec.RunPolicy.ManagedBy
	}
	replicas := field.NewPath("spec", "mpiReplicaSpecs")
	for _, role := range []string{"Launcher", "Worker"} {
		rs, ok := spec.MPIReplicaSpecs[role]
		if !ok {
			continue
		}
		template, err := v.Doc.Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", role, "template"))
		if err != nil || template == nil {
			return nil, nil, fmt.Errorf("%s has no template", replicas.Child(role))
		}
		r := Replica{Replicas: rs.Replicas, RestartPolicy: rs.RestartPolicy, Template: template,
			Path: replicas.Child(role, "template")}
		if role == "Launcher" {
			job.Launcher = r
		} else {
			job.Worker = &r
		}
	}

	var warnings []render.Warning
	if policy, _ := v.Doc.Pipe(yaml.Lookup("spec", "runPolicy", "schedulingPolicy")); policy != nil {
		warnings = append(warnings, render.Warning{
			Field:   field.NewPath("spec", "runPolicy", "schedulingPolicy"),
			Message: "gang scheduling is not rendered yet: the policy is validated, then ignored",
		})
	}
	return job, warnings, nil
}
