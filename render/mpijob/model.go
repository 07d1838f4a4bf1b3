// Package mpijob renders an MPIJob into native objects: a headless Service
// that names every pod, a ConfigMap with the hostfile and the launcher's
// scripts, an Indexed Job of workers running sshd, and a launcher Job whose
// mpirun starts only once every worker accepts SSH.
//
// Every MPIJob API version is first read into Job, the one shape the
// renderer knows.
package mpijob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/workload"
)

// Job is what rendering needs to know of an MPIJob, whatever its version.
type Job struct {
	workload.Owner

	Implementation      mpi.Implementation
	SlotsPerWorker      int32
	RunLauncherAsWorker bool
	SSHAuthMountPath    string
	// MainContainer names the container mpirun and its processes run in;
	// empty for the first.
	MainContainer string

	Launcher workload.Replica
	// Worker is nil for a job that runs on its launcher alone.
	Worker *workload.Replica

	RunPolicy workload.RunPolicy
	// SchedulingPolicy is nil when the spec has none.
	SchedulingPolicy *gang.Policy

	Options options.Options

	// Where a job version keeps what messages point at; Kubeflow's
	// mpiReplicaSpecs and runPolicy when nil.
	WorkersPath, CleanPodPolicyPath *field.Path
}

func (j *Job) workersPath() *field.Path {
	if j.WorkersPath != nil {
		return j.WorkersPath
	}
	return field.NewPath("spec", "mpiReplicaSpecs", "Worker", "replicas")
}

func (j *Job) cleanPodPolicyPath() *field.Path {
	if j.CleanPodPolicyPath != nil {
		return j.CleanPodPolicyPath
	}
	return field.NewPath("spec", "runPolicy", "cleanPodPolicy")
}

// kubectlExec tells whether mpirun reaches the workers through kubectl exec
// rather than SSH.
func (j *Job) kubectlExec() bool { return j.Options.MPI.LaunchMode == options.KubectlExec }

// elastic is the bounds within which the worker count changes at run
// time; nil for a job whose count is the rendered one.
func (j *Job) elastic() *options.Bounds {
	if j.Worker == nil {
		return nil
	}
	return j.Options.ElasticWorkers
}

// workers is the number of worker pods.
func (j *Job) workers() int {
	if j.Worker == nil {
		return 0
	}
	return int(j.Worker.Replicas)
}
