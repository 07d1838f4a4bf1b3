// Package mpijob renders an MPIJob into native objects: a headless Service
// that names every pod, a ConfigMap with the hostfile and the launcher's
// scripts, an Indexed Job of workers running sshd, and a launcher Job whose
// mpirun starts only once every worker accepts SSH.
//
// Every MPIJob API version is first read into Job, the one shape the
// renderer knows.
package mpijob

import (
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/workload"
)

// Job is what rendering needs to know of an MPIJob, whatever its version.
type Job struct {
	workload.Owner

	Implementation      mpi.Implementation
	SlotsPerWorker      int32
	RunLauncherAsWorker bool
	SSHAuthMountPath    string

	Launcher workload.Replica
	// Worker is nil for a job that runs on its launcher alone.
	Worker *workload.Replica

	RunPolicy workload.RunPolicy
}

// workers is the number of worker pods.
func (j *Job) workers() int {
	if j.Worker == nil {
		return 0
	}
	return int(j.Worker.Replicas)
}
