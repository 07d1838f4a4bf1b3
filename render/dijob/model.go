// Package dijob renders a DIJob of DI-engine (diengine.opendilab.org/
// v2alpha1) into native objects: a headless Service exposing the DI port
// under which every worker has a stable hostname, and the workers.
//
// A DIJob's workers are numbered across the job: their rank. The design's
// shape (spec.template) has one kind of worker; the later shape
// (spec.tasks) one kind per task, ranked in task order. Each kind runs as
// one workload whose pods share a template, so the variables that differ by
// rank (DI_RANK, DI_NODE_IDS_ARG, DI_ATTACHED_NODES_ARG) are computed in the
// pod, from its index, by a short shell prelude to the container's command
// (see wrapper.go for why).
package dijob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/workload"
)

// Job is what rendering needs to know of a DIJob.
type Job struct {
	workload.Owner

	// Generation is the last part of DI_JOB_ID (namespace.name.generation).
	Generation int64
	// Priority is normal or high; the allocator serves high first.
	Priority string
	// CleanPodPolicy is None, Running or All.
	CleanPodPolicy string
	BackoffLimit   int32
	// Preemptible jobs have a worker count decided at run time, within
	// Engine's bounds.
	Preemptible bool

	// Engine is nil for a job with tasks.
	Engine *Engine
	// Workers are the job's kinds of workers, in rank order.
	Workers []*Workers
	// Volumes are spec.volumes, which every task's pods get.
	Volumes *yaml.RNode

	Options options.Options
}

// Engine is spec.engineFields with the bounds of v1.0's shape.
type Engine struct {
	// Topology is star, mesh or alone: whom a worker attaches to.
	Topology        string
	ParallelWorkers int32
	Min, Max        int32
}

// Workers are one kind of worker: v1.0's single one, or a task.
type Workers struct {
	// Workload names the Job or StatefulSet, and its pods' hostnames
	// <Workload>-<i>.
	Workload string
	// Role is the pods' job-role label: worker, or the task's name.
	Role string
	// Task and Type are the task's name and type; empty for v1.0's
	// shape. Named tells whether the task writes its name or takes its
	// type's, the default.
	Task, Type string
	Named      bool
	Replicas   int32
	// FirstRank is the rank of the pod of index 0.
	FirstRank int32
	Template  *yaml.RNode
	Path      *field.Path
}

// mainContainer is the container DI-orchestrator gives the DI port: the one
// so named, else the first.
const mainContainer = "di-container"
