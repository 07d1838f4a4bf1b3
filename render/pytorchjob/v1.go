package pytorchjob

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// v1Spec is the part of a kubeflow.org/v1 PyTorchJob spec, defaults filled
// in by the schema, that rendering reads; pod templates are read from the
// document as written.
type v1Spec struct {
	NprocPerNode  string `json:"nprocPerNode"`
	ElasticPolicy *struct {
		ElasticPolicy
		MinReplicas *int32 `json:"minReplicas"`
		MaxReplicas *int32 `json:"maxReplicas"`
	} `json:"elasticPolicy"`
	RunPolicy           workload.RunPolicySpec          `json:"runPolicy"`
	PyTorchReplicaSpecs map[string]workload.ReplicaSpec `json:"pytorchReplicaSpecs"`
}

// trainingOperator is the managedBy value naming training-operator, whose
// place the Kubernetes Job controller takes here.
const trainingOperator = "kubeflow.org/training-operator"

// DecodeV1 reads a validated kubeflow.org/v1 PyTorchJob.
func DecodeV1(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	job, err := fromV1(v)
	if err != nil {
		return nil, nil, err
	}
	job.Scaling = opts.ElasticWorkers
	job.ResizesJobs = opts.Gang.ResizesJobs()
	job.ReplicaServices = opts.PyTorch.EveryReplicaServed()
	return job, nil, nil
}

func fromV1(v *schemas.Validated) (*Job, error) {
	var spec v1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	owner, err := workload.OwnerOf(v.Doc)
	if err != nil {
		return nil, err
	}
	owner.Subdomain = handoff.PyTorchJobServiceName(owner.Name)
	replicas, err := workload.Replicas(v.Doc, spec.PyTorchReplicaSpecs, "pytorchReplicaSpecs", "Master", "Worker")
	if err != nil {
		return nil, err
	}
	policy, err := gang.PolicyOf(v)
	if err != nil {
		return nil, err
	}
	written, _ := v.Doc.Pipe(yaml.Lookup("spec", "nprocPerNode"))
	job := &Job{
		Owner:               owner,
		Master:              replicas[0],
		Worker:              replicas[1],
		NprocPerNode:        spec.NprocPerNode,
		NprocPerNodeWritten: written != nil,
		RunPolicy:           spec.RunPolicy.Policy(trainingOperator),
		SchedulingPolicy:    policy,
	}
	if e := spec.ElasticPolicy; e != nil {
		// The schema requires a Worker with an elastic policy.
		elastic := e.ElasticPolicy
		elastic.MinReplicas, elastic.MaxReplicas = bounds(e.MinReplicas, e.MaxReplicas, job.Worker.Replicas)
		if m, _ := v.Doc.Pipe(yaml.Lookup("spec", "elasticPolicy", "metrics")); m != nil && len(m.YNode().Content) > 0 {
			elastic.Metrics = m.YNode()
		}
		job.Elastic = &elastic
	}

	return job, nil
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
