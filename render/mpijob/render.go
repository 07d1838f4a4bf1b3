package mpijob

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// Volumes trainfn adds to pod templates. hostsVolume holds the files the
// launcher writes when its ConfigMap cannot list the hosts.
const (
	sshVolume     = "ssh-auth"
	configVolume  = "mpi-job-config"
	hostsVolume   = "mpi-job-hosts"
	kubectlVolume = "mpi-job-kubectl"
)

// configMapDir is where the launcher's first init container finds the
// ConfigMap when the launcher writes the hostfile, mpi.ConfigDir being
// the written files'.
const configMapDir = "/etc/mpi-configmap"

// Init containers trainfn adds to the launcher: writeHostsContainer writes
// a hostfile too large for the ConfigMap, waitContainer holds mpirun back
// (and mpi.DeliveryContainer brings kubectl in the KubectlExec launch mode).
const (
	writeHostsContainer = "write-hosts"
	waitContainer       = "wait-for-workers"
)

// maxConfigMapBytes is the most a ConfigMap's data may hold: the API server
// refuses a ConfigMap whose values add up to more than MaxSecretSize, 1 MiB
// (ValidateConfigMap), however much room the whole object would have
// (objectsize.Max). dataSize counts the keys too, a few bytes to spare.
const maxConfigMapBytes = corev1.MaxSecretSize

// Check refuses elastic bounds the job cannot keep to, and what the rsh
// launch mode cannot run.
func (j *Job) Check() field.ErrorList {
	if err := checkElastic(j); err != nil {
		return field.ErrorList{err}
	}
	var errs field.ErrorList
	for _, r := range []*workload.Replica{&j.Launcher, j.Worker} {
		if r != nil {
			errs = append(errs, pod.NewTemplate(r.Template, r.Path).ResourceErrors()...)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if j.launchMode() == options.Rsh {
		return checkRsh(j)
	}
	return nil
}

// Build expands a job into its objects: the Services, the ConfigMap, the
// launcher Job and, when the job has workers, their Indexed Job (an
// elastic job's StatefulSet) and, in the KubectlExec launch mode, the
// launcher's RBAC; its gang is the launcher and the workers.
func (j *Job) Build() (result.Output, gang.Gang, field.ErrorList) {
	var out result.Output
	var errs field.ErrorList
	first, workers := hostList(j)
	config := map[string]string{}
	if j.workers() > 0 {
		m := modeOf(j.launchMode())
		config[mpi.WaitForWorkersKey] = m.wait(j.Implementation)
		config[mpi.LaunchKey] = m.launch(j.Implementation)
		if j.workersWrapped() {
			config[mpi.WorkKey] = mpi.Work
		}
		maps.Copy(config, m.files(j))
	}
	hosts := slices.Concat(first, workers.Hosts())
	listed := map[string]string{mpi.HostfileKey: mpi.Hostfile(j.Implementation, hosts)}
	if j.elastic() == nil {
		// An elastic job's discovery script is the reconciler's to write.
		listed[handoff.DiscoverHostsKey] = handoff.DiscoverHosts(hosts, j.discoverFormat())
	}
	// Too many hosts to list in the ConfigMap: the launcher writes the
	// same files when it starts. Not for an elastic job, whose discovery
	// script the reconciler keeps in the ConfigMap.
	writesHosts := dataSize(config)+dataSize(listed) > maxConfigMapBytes && j.elastic() == nil
	if writesHosts {
		config[mpi.WriteHostsKey] = mpi.WriteHosts(j.Implementation, j.discoverFormat(), first, workers)
	} else {
		maps.Copy(config, listed)
	}
	if size := dataSize(config); size > maxConfigMapBytes {
		errs = append(errs, field.Invalid(j.workersPath(), j.workers(),
			fmt.Sprintf("too many workers for one ConfigMap: the hostfile and scripts of this elastic job take %d bytes, the API server takes at most %d in a ConfigMap's data", size, maxConfigMapBytes)))
	}
	out.Warnings = append(out.Warnings, jobWarnings(j, len(hosts))...)

	// Every pod's name resolves from the moment it has an address, not
	// once it is ready: the launcher's wait probes the workers as they
	// start, and in.rshd looks up the launcher's address, from a launcher
	// that is not ready yet, before it runs anything (found on a real node).
	service := j.HeadlessService(handoff.ServiceName(j.Name), handoff.JobLabels(j.Name))
	if err := service.PipeE(yaml.Lookup("spec"), yaml.SetField("publishNotReadyAddresses", yaml.NewRNode(ynode.Of(true)))); err != nil {
		return result.Output{}, gang.Gang{}, field.ErrorList{field.InternalError(nil, err)}
	}
	out.Objects = append(out.Objects, service)
	if mpi.LaunchesBackToLauncher(j.Implementation) {
		// Hydra's remote proxies dial the launcher by its short hostname,
		// which resolves as a Service name in the namespace.
		out.Objects = append(out.Objects, j.HeadlessService(handoff.LauncherName(j.Name), handoff.RoleLabels(j.Name, handoff.RoleLauncher)))
	}
	out.Objects = append(out.Objects, configMap(j, config))

	launcher, lt, warnings, lerrs := launcherJob(j, writesHosts)
	out.Objects = append(out.Objects, launcher)
	out.Warnings = append(out.Warnings, warnings...)
	errs = append(errs, lerrs...)
	members := []gang.Member{{Workload: launcher, Template: lt, Pods: 1, PlacedTogether: placedTogether(lt)}}

	if j.Worker != nil {
		var workers *yaml.RNode
		var wt *pod.Template
		var err *field.Error
		if j.workersInStatefulSet() {
			workers, wt, warnings, err = workerStatefulSet(j)
		} else {
			workers, wt, warnings, err = workerJob(j)
		}
		errs = appendErr(errs, err)
		if j.kubectlExec() {
			rbac, err := launcherRBAC(j)
			errs = appendErr(errs, err)
			out.Objects = append(out.Objects, rbac...)
		}
		if j.launchMode() == options.Rsh {
			out.Objects = append(out.Objects, rshNetworkPolicy(j))
		}
		handOff(j, workers)
		out.Objects = append(out.Objects, workers)
		out.Warnings = append(out.Warnings, warnings...)
		members = append(members, gang.Member{Workload: workers, Template: wt, Pods: j.Worker.Replicas, Resized: j.elastic() != nil})
	}

	if len(errs) > 0 {
		return result.Output{}, gang.Gang{}, errs
	}
	return out, gang.Gang{Owner: j.Owner, Policy: j.SchedulingPolicy, Members: members}, nil
}

// workerContainer names the workers' container that mpirun's processes run
// in through kubectl exec.
func workerContainer(job *Job) string {
	return job.main(pod.NewTemplate(job.Worker.Template, job.Worker.Path)).Get("name").Value
}

// hostList is every host of the hostfile: first the launcher, when it also
// works, then the workers in index order. An elastic job's hostfile lists
// the workers it cannot start without, its minimum, which the launcher
// waits for; the discovery script has the rest.
func hostList(job *Job) (first []handoff.Host, workers mpi.NumberedHosts) {
	if job.RunLauncherAsWorker {
		first = append(first, handoff.Host{Name: handoff.DNSName(job.Name, handoff.LauncherName(job.Name)), Slots: job.SlotsPerWorker})
	}
	workers.Prefix, workers.Suffix = handoff.WorkerHostParts(job.Name)
	workers.Count, workers.Slots = job.workers(), job.SlotsPerWorker
	if e := job.elastic(); e != nil {
		workers.Count = int(e.Min)
	}
	return first, workers
}

// checkElastic refuses elastic bounds that the job cannot keep to.
func checkElastic(job *Job) *field.Error {
	e := job.Options.ElasticWorkers
	if e == nil {
		return nil
	}
	at := field.NewPath("metadata", "annotations").Key(options.ElasticWorkersAnnotation)
	if job.Worker == nil {
		return field.Invalid(at, e.String(), "the job has no workers to scale")
	}
	if n := job.Worker.Replicas; n < e.Min || n > e.Max {
		return field.Invalid(job.workersPath(), n, fmt.Sprintf("must be within the elastic bounds %s of %s", e, options.ElasticWorkersAnnotation))
	}
	return nil
}

// handOff annotates the workers' workload with what the reconciler needs
// at run time: when the job ends and what then happens to the workers,
// and, for an elastic job, its bounds and discovery.
func handOff(job *Job, workers *yaml.RNode) {
	a := map[string]string{
		handoff.CleanPodPolicy: job.RunPolicy.CleanPodPolicy,
		handoff.EndsWith:       handoff.EndsWithJob(handoff.LauncherName(job.Name)),
	}
	if e := job.elastic(); e != nil {
		a[handoff.ElasticWorkers] = e.String()
		a[handoff.Workers] = strconv.Itoa(job.workers())
		a[handoff.SlotsPerWorker] = strconv.Itoa(int(job.SlotsPerWorker))
		a[handoff.DiscoverFormatAnnotation] = string(job.discoverFormat())
		if job.RunLauncherAsWorker {
			a[handoff.LauncherSlots] = strconv.Itoa(int(job.SlotsPerWorker))
		}
	}
	workload.Annotate(workers, a)
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
func jobWarnings(job *Job, hosts int) []result.Warning {
	var warnings []result.Warning
	warnings = append(warnings, horovodWarning(job)...)
	if hosts == 0 {
		warnings = append(warnings, result.Warning{
			Field:   field.NewPath("spec", "mpiReplicaSpecs"),
			Message: "the hostfile is empty: there is no Worker and runLauncherAsWorker is false, so mpirun has no host to run on",
		})
	} else if job.SlotsPerWorker == 0 {
		warnings = append(warnings, noSlotsWarning(job))
	}
	if job.Worker != nil && !job.workersEnd() && job.RunPolicy.CleanPodPolicy != "None" && job.RunPolicy.ActiveDeadlineSeconds == nil {
		warnings = append(warnings, result.Warning{
			Field: job.cleanPodPolicyPath(),
			Message: fmt.Sprintf("stopping the workers when the launcher ends (cleanPodPolicy %s) is carried out at run time by trainfn's reconciler; without it they keep running, "+
				"until the Jobs are deleted (%s bounds them)", job.RunPolicy.CleanPodPolicy, job.deadlinePath()),
		})
	}
	return warnings
}

// noSlotsWarning says what mpirun makes of hosts of no slots, which
// mpi-operator accepts and writes into the hostfile as trainfn does: Open
// MPI's starts no process on them, and Hydra's (MPICH, Intel MPI) fails.
func noSlotsWarning(job *Job) result.Warning {
	fails := `Open MPI's mpirun starts no process on them unless given --oversubscribe ("All nodes which are allocated for this job are already filled")`
	if job.Implementation != mpi.OpenMPI {
		fails = "Hydra's mpirun (MPICH, Intel MPI) fails on a host of 0 slots"
	}
	return result.Warning{
		Field: field.NewPath("spec", "slotsPerWorker"),
		Message: "0 slots: the hostfile gives every host 0 slots, as mpi-operator's does, and " + fails +
			"; set slotsPerWorker to the number of processes each worker runs",
	}
}

func configMap(job *Job, data map[string]string) *yaml.RNode {
	d := ynode.Map()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		d.Content = append(d.Content, ynode.String(k), ynode.Text(data[k]))
	}
	return job.Object("v1", "ConfigMap", handoff.ConfigMapName(job.Name), handoff.JobLabels(job.Name), "data", d)
}
