package pytorchjob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// v1Spec is the part of a kubeflow.org/v1 PyTorchJob spec, defaults filled
// in by the schema, that rendering reads; pod templates are read from the
// document as written.
type v1Spec struct {
	NprocPerNode  string `json:"nprocPerNode"`
	ElasticPolicy *struct {
		MinReplicas  *int32     `json:"minReplicas"`
		MaxReplicas  *int32     `json:"maxReplicas"`
		RDZVBackend  string     `json:"rdzvBackend"`
		RDZVPort     *int32     `json:"rdzvPort"`
		RDZVHost     *string    `json:"rdzvHost"`
		RDZVID       *string    `json:"rdzvId"`
		RDZVConf     []RDZVConf `json:"rdzvConf"`
		Standalone   bool       `json:"standalone"`
		NProcPerNode *int32     `json:"nProcPerNode"`
		MaxRestarts  *int32     `json:"maxRestarts"`
	} `json:"elasticPolicy"`
	RunPolicy struct {
		CleanPodPolicy          string `json:"cleanPodPolicy"`
		TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished"`
		ActiveDeadlineSeconds   *int64 `json:"activeDeadlineSeconds"`
		BackoffLimit            *int32 `json:"backoffLimit"`
		Suspend                 bool   `json:"suspend"`
		ManagedBy               string `json:"managedBy"`
	} `json:"runPolicy"`
	PyTorchReplicaSpecs map[string]struct {
		Replicas      int32  `json:"replicas"`
		RestartPolicy string `json:"restartPolicy"`
	} `json:"pytorchReplicaSpecs"`
}

// trainingOperator is the managedBy value naming training-operator, whose
// place the Kubernetes Job controller takes here.
const trainingOperator = "kubeflow.org/training-operator"

// RenderV1 renders a validated kubeflow.org/v1 PyTorchJob.
func RenderV1(v *schemas.Validated) (render.Output, field.ErrorList) {
	job, warnings, err := fromV1(v)
	if err != nil {
		return render.Output{}, field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	out, errs := Render(job)
	out.Warnings = append(warnings, out.Warnings...)
	return out, errs
}

func fromV1(v *schemas.Validated) (*Job, []render.Warning, error) {
	var spec v1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	meta, err := v.Doc.GetMeta()
	if err != nil {
		return nil, nil, err
	}
	written, _ := v.Doc.Pipe(yaml.Lookup("spec", "nprocPerNode"))
	job := &Job{
		Owner: workload.Owner{
			Name:        meta.Name,
			Namespace:   meta.Namespace,
			Labels:      meta.Labels,
			Annotations: meta.Annotations,
		},
		NprocPerNode:        spec.NprocPerNode,
		NprocPerNodeWritten: written != nil,
		RunPolicy: workload.RunPolicy{
			CleanPodPolicy:          spec.RunPolicy.CleanPodPolicy,
			BackoffLimit:            spec.RunPolicy.BackoffLimit,
			ActiveDeadlineSeconds:   spec.RunPolicy.ActiveDeadlineSeconds,
			TTLSecondsAfterFinished: spec.RunPolicy.TTLSecondsAfterFinished,
			Suspend:                 spec.RunPolicy.Suspend,
		},
	}
	if spec.RunPolicy.ManagedBy != trainingOperator {
		job.RunPolicy.ManagedBy = spec.RunPolicy.ManagedBy
	}
	replicas := field.NewPath("spec", "pytorchReplicaSpecs")
	for _, role := range []string{"Master", "Worker"} {
		rs, ok := spec.PyTorchReplicaSpecs[role]
		if !ok {
			continue
		}
		template, err := v.Doc.Pipe(yaml.Lookup("spec", "pytorchReplicaSpecs", role, "template"))
		if err != nil || template == nil {
			return nil, nil, fmt.Errorf("%s has no template", replicas.Child(role))
		}
		r := &Replica{Replicas: rs.Replicas, RestartPolicy: rs.RestartPolicy, Template: template,
			Path: replicas.Child(role, "template")}
		if role == "Master" {
			job.Master = r
		} else {
			job.Worker = r
		}
	}
	if e := spec.ElasticPolicy; e != nil {
		// The schema requires a Worker with an elastic policy.
		minR, maxR := bounds(e.MinReplicas, e.MaxReplicas, job.Worker.Replicas)
		job.Elastic = &ElasticPolicy{
			MinReplicas: minR, MaxReplicas: maxR,
			RDZVBackend: e.RDZVBackend, RDZVPort: e.RDZVPort, RDZVHost: e.RDZVHost, RDZVID: e.RDZVID,
			RDZVConf: e.RDZVConf, Standalone: e.Standalone, NProcPerNode: e.NProcPerNode, MaxRestarts: e.MaxRestarts,
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

// bounds are the elastic job's minimum and maximum worker counts as
// training-operator defaults them: a missing bound is the other one, and
// with neither, both are the worker count.
func bounds(minR, maxR *int32, workers int32) (int32, int32) {
	switch {
	case minR != nil && maxR != nil:
		return *minR, *maxR
	case maxR != nil:
		return *maxR, *maxR
	case minR != nil:
		return *minR, *minR
	default:
		return workers, workers
	}
}
