package mpijob

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/labels"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/naming"
	"github.com/trainfn/trainfn/render/ynode"
)

// Volumes trainfn adds to pod templates.
const (
	sshVolume    = "ssh-auth"
	configVolume = "mpi-job-config"
)

// waitContainer is the launcher's init container that holds mpirun back.
const waitContainer = "wait-for-workers"

// maxConfigMapBytes is the most the API server stores in one object.
const maxConfigMapBytes = 1 << 20

// Render expands a job into its objects: the Services, the ConfigMap, the
// launcher Job and, when the job has workers, their Indexed Job.
func Render(job *Job) (render.Output, field.ErrorList) {
	var out render.Output
	var errs field.ErrorList

	hosts := hostList(job)
	config := map[string]string{
		mpi.HostfileKey:      mpi.Hostfile(job.Implementation, hosts),
		mpi.DiscoverHostsKey: mpi.DiscoverHosts(hosts),
	}
	if job.workers() > 0 {
		config[mpi.WaitForWorkersKey] = mpi.WaitForWorkers
	}
	if size := dataSize(config); size > maxConfigMapBytes {
		errs = append(errs, field.Invalid(field.NewPath("spec", "mpiReplicaSpecs", "Worker", "replicas"), job.workers(),
			fmt.Sprintf("too many workers for one ConfigMap: its hostfile and scripts take %d bytes, the API server stores at most %d", size, maxConfigMapBytes)))
	}
	out.Warnings = append(out.Warnings, jobWarnings(job, len(hosts))...)

	out.Objects = append(out.Objects, job.HeadlessService(naming.Service(job.Name), labels.Job(job.Name)))
	if mpi.LaunchesBackToLauncher(job.Implementation) {
		// Hydra's remote proxies dial the launcher by its short hostname,
		// which resolves as a Service name in the namespace.
		out.Objects = append(out.Objects, job.HeadlessService(naming.Launcher(job.Name), labels.Role(job.Name, labels.RoleLauncher)))
	}
	out.Objects = append(out.Objects, configMap(job, config))

	launcher, warnings, lerrs := launcherJob(job)
	out.Objects = append(out.Objects, launcher)
	out.Warnings = append(out.Warnings, warnings...)
	errs = append(errs, lerrs...)

	if job.Worker != nil {
		workers, warnings, werrs := workerJob(job)
		out.Objects = append(out.Objects, workers)
		out.Warnings = append(out.Warnings, warnings...)
		errs = append(errs, werrs...)
	}
	if len(errs) > 0 {
		return render.Output{}, errs
	}
	return out, nil
}

// hostList is every host of the hostfile: the launcher first when it also
// works, then the workers in index order.
func hostList(job *Job) []mpi.Host {
	hosts := make([]mpi.Host, 0, job.workers()+1)
	if job.RunLauncherAsWorker {
		hosts = append(hosts, mpi.Host{Name: naming.Host(job.Name, naming.Launcher(job.Name)), Slots: job.SlotsPerWorker})
	}
	for i := range job.workers() {
		hosts = append(hosts, mpi.Host{Name: naming.Host(job.Name, naming.WorkerHostname(job.Name, i)), Slots: job.SlotsPerWorker})
	}
	return hosts
}

func dataSize(data map[string]string) int {
	size := 0
	for k, v := range data {
		size += len(k) + len(v)
	}
	return size
}

// jobWarnings are what a user should know about a job that renders but may
// not run as meant.
func jobWarnings(job *Job, hosts int) []render.Warning {
	var warnings []render.Warning
	if hosts == 0 {
		warnings = append(warnings, render.Warning{
			Field:   field.NewPath("spec", "mpiReplicaSpecs"),
			Message: "the hostfile is empty: there is no Worker and runLauncherAsWorker is false, so mpirun has no host to run on",
		})
	}
	if job.Worker != nil && job.RunPolicy.CleanPodPolicy != "None" && job.RunPolicy.ActiveDeadlineSeconds == nil {
		warnings = append(warnings, render.Warning{
			Field: field.NewPath("spec", "runPolicy", "cleanPodPolicy"),
			Message: fmt.Sprintf("%s is carried out at run time by trainfn's reconciler; without it the workers keep running after the launcher ends, "+
				"until the Jobs are deleted (runPolicy.activeDeadlineSeconds bounds them)", job.RunPolicy.CleanPodPolicy),
		})
	}
	return warnings
}

func configMap(job *Job, data map[string]string) *yaml.RNode {
	d := ynode.Map()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		d.Content = append(d.Content, ynode.String(k), ynode.Text(data[k]))
	}
	return job.Object("v1", "ConfigMap", naming.ConfigMap(job.Name), labels.Job(job.Name), "data", d)
}
