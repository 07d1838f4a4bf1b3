// Package pytorchjob renders a PyTorchJob into native objects: headless
// Services that name its pods, the master as a one-pod Indexed Job, and the
// workers. A static job with a master runs one Job per worker, because each
// worker's pod carries its own RANK; any other job runs its workers as one
// Indexed Job, which run-time scaling resizes without a re-render.
//
// Every pod gets training-operator's environment contract (MASTER_ADDR,
// RANK, WORLD_SIZE and the PET_* variables torchrun reads), so training
// scripts written for the operator run unchanged.
package pytorchjob

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/workload"
)

// Job is what rendering needs to know of a PyTorchJob.
type Job struct {
	workload.Owner

	// Master and Worker are nil when the job has none.
	Master *workload.Replica
	Worker *workload.Replica

	// NprocPerNode is spec.nprocPerNode: auto, cpu, gpu or a number; empty
	// when the deprecated elasticPolicy.nProcPerNode takes its place.
	NprocPerNode string
	// NprocPerNodeWritten tells a value the user wrote from the default.
	NprocPerNodeWritten bool

	// Elastic is nil for a static job.
	Elastic *ElasticPolicy

	RunPolicy workload.RunPolicy
	// SchedulingPolicy is nil when the spec has none.
	SchedulingPolicy *gang.Policy

	// Scaling is nil unless the worker count changes at run time, within
	// these bounds; the workers then run as a StatefulSet, or as an
	// Indexed Job when ResizesJobs.
	Scaling *handoff.Bounds
	// ResizesJobs: the gang scheduler resizes only Jobs (Kueue).
	ResizesJobs bool

	// ReplicaServices gives every worker a Service of its name.
	ReplicaServices bool
}

// ElasticPolicy is spec.elasticPolicy with upstream's defaults applied.
type ElasticPolicy struct {
	// The bounds are filled in from each other or the worker count when
	// the spec leaves them out.
	MinReplicas  int32      `json:"-"`
	MaxReplicas  int32      `json:"-"`
	RDZVBackend  string     `json:"rdzvBackend"`
	RDZVPort     *int32     `json:"rdzvPort"`
	RDZVHost     *string    `json:"rdzvHost"`
	RDZVID       *string    `json:"rdzvId"`
	RDZVConf     []RDZVConf `json:"rdzvConf"`
	Standalone   bool       `json:"standalone"`
	NProcPerNode *int32     `json:"nProcPerNode"`
	MaxRestarts  *int32     `json:"maxRestarts"`
	// Metrics are the autoscaler's, as autoscaling/v2 writes them; nil
	// when the spec has none.
	Metrics *yaml.Node `json:"-"`
}

// RDZVConf is one extra rendezvous setting.
type RDZVConf struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ranksPerWorker tells whether each worker's pod carries its own rank:
// training-operator numbers workers after the master, which a static job
// needs and an Indexed Job cannot express.
func (j *Job) ranksPerWorker() bool { return j.Master != nil && j.Elastic == nil }

// scaledAtRunTime tells whether the workers' count is left to run time.
func (j *Job) scaledAtRunTime() bool { return j.Scaling != nil }

// workersInStatefulSet tells whether the workers run as a StatefulSet,
// which names its pods as their hosts and which people and autoscalers
// scale: those scaled at run time do, unless the gang scheduler resizes
// only Jobs, and they are then an Indexed Job resized through its
// parallelism.
func (j *Job) workersInStatefulSet() bool {
	return j.scaledAtRunTime() && !j.ResizesJobs
}
