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
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
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

	// DiscoverFormat is how discover_hosts.sh prints a host, as the
	// version's operator printed it; HostSlots unless it says.
	DiscoverFormat handoff.DiscoverFormat

	Launcher workload.Replica
	// Worker is nil for a job that runs on its launcher alone.
	Worker *workload.Replica

	RunPolicy workload.RunPolicy
	// SchedulingPolicy is nil when the spec has none.
	SchedulingPolicy *gang.Policy

	Options options.Options

	// PodLabels are the labels the version's operator put on the pods of
	// a role, beside trainfn's own; nil when it put none of its own.
	PodLabels func(role string) map[string]string

	// Where a job version keeps what messages point at; Kubeflow's
	// mpiReplicaSpecs and runPolicy when nil.
	WorkersPath, CleanPodPolicyPath, DeadlinePath *field.Path
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

// podTemplate starts editing a replica's template for one role of the
// job, with the labels its operator gave that role's pods.
func (j *Job) podTemplate(r *workload.Replica, role, restartPolicy string) (*pod.Template, []result.Warning) {
	t, warnings := j.PodTemplate(r.Template, r.Path, role, restartPolicy)
	if j.PodLabels != nil {
		t.AddLabels(j.PodLabels(role), true)
	}
	return t, warnings
}

func (j *Job) deadlinePath() *field.Path {
	if j.DeadlinePath != nil {
		return j.DeadlinePath
	}
	return field.NewPath("spec", "runPolicy", "activeDeadlineSeconds")
}

// launchMode is how mpirun reaches the workers; SSH unless the options
// say otherwise.
func (j *Job) launchMode() options.LaunchMode {
	if m := j.Options.MPI.LaunchMode; m != "" {
		return m
	}
	return options.SSH
}

// kubectlExec tells whether mpirun reaches the workers through kubectl exec.
func (j *Job) kubectlExec() bool { return j.launchMode() == options.KubectlExec }

// elastic is the bounds within which the worker count changes at run
// time; nil for a job whose count is the rendered one.
func (j *Job) elastic() *handoff.Bounds {
	if j.Worker == nil {
		return nil
	}
	return j.Options.ElasticWorkers
}

// workersInStatefulSet tells whether the workers run as a StatefulSet:
// an elastic job's do, which people, scripts and autoscalers scale, unless
// the gang scheduler resizes only Jobs.
func (j *Job) workersInStatefulSet() bool {
	return j.elastic() != nil && !j.Options.Gang.ResizesJobs()
}

// workers is the number of worker pods.
func (j *Job) workers() int {
	if j.Worker == nil {
		return 0
	}
	return int(j.Worker.Replicas)
}

// discoverFormat is how discover_hosts.sh prints a host.
func (j *Job) discoverFormat() handoff.DiscoverFormat {
	if j.DiscoverFormat == "" {
		return handoff.HostSlots
	}
	return j.DiscoverFormat
}
