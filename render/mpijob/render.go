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
	"github.com/trainfn/trainfn/render/pod"
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

	out.Objects = append(out.Objects, service(job, naming.Service(job.Name), labels.Job(job.Name)))
	if mpi.LaunchesBackToLauncher(job.Implementation) {
		// Hydra's remote proxies dial the launcher by its short hostname,
		// which resolves as a Service name in the namespace.
		out.Objects = append(out.Objects, service(job, naming.Launcher(job.Name), labels.Role(job.Name, labels.RoleLauncher)))
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

// object starts a rendered object: its metadata carries the job's namespace,
// labels and annotations, and trainfn's labels.
func object(job *Job, apiVersion, kind, name string, own map[string]string, spec ...any) *yaml.RNode {
	lbls := maps.Clone(job.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	maps.Copy(lbls, own)
	var namespace *string
	if job.Namespace != "" {
		namespace = &job.Namespace
	}
	var annotations *yaml.Node
	if inherited := render.InheritedAnnotations(job.Annotations); len(inherited) > 0 {
		annotations = ynode.StringMap(inherited)
	}
	meta := ynode.Map("name", name, "namespace", namespace, "labels", ynode.StringMap(lbls), "annotations", annotations)
	fields := append([]any{"apiVersion", apiVersion, "kind", kind, "metadata", meta}, spec...)
	return yaml.NewRNode(ynode.Map(fields...))
}

// service is a headless Service whose DNS records name the selected pods.
func service(job *Job, name string, selector map[string]string) *yaml.RNode {
	return object(job, "v1", "Service", name, labels.Job(job.Name),
		"spec", ynode.Map("clusterIP", "None", "selector", ynode.StringMap(selector)))
}

func configMap(job *Job, data map[string]string) *yaml.RNode {
	d := ynode.Map()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		d.Content = append(d.Content, ynode.String(k), ynode.Text(data[k]))
	}
	return object(job, "v1", "ConfigMap", naming.ConfigMap(job.Name), labels.Job(job.Name), "data", d)
}

// jobSpec maps the run policy onto batch/v1 Job fields, shared by the
// launcher's Job and the workers'.
func jobSpec(job *Job, fields ...any) *yaml.Node {
	var suspend *bool
	if job.RunPolicy.Suspend {
		suspend = &job.RunPolicy.Suspend
	}
	var managedBy *string
	if job.RunPolicy.ManagedBy != "" {
		managedBy = &job.RunPolicy.ManagedBy
	}
	return ynode.Map(append([]any{
		"backoffLimit", job.RunPolicy.BackoffLimit,
		"activeDeadlineSeconds", job.RunPolicy.ActiveDeadlineSeconds,
		"ttlSecondsAfterFinished", job.RunPolicy.TTLSecondsAfterFinished,
		"suspend", suspend,
		"managedBy", managedBy,
	}, fields...)...)
}

// podTemplate starts editing a replica's template: labels, restart policy
// and the DNS settings every pod of the job shares.
func podTemplate(job *Job, r *Replica, role string) (*pod.Template, []render.Warning) {
	t := pod.NewTemplate(r.Template, r.Path)
	t.AddLabels(job.Labels, false)
	t.AddLabels(labels.Role(job.Name, role), true)
	var warnings []render.Warning
	warnings = append(warnings, overridden(t, "restartPolicy", r.RestartPolicy, "the replica's restartPolicy applies")...)
	warnings = append(warnings, overridden(t, "subdomain", naming.Service(job.Name), "the job's Service names its pods")...)
	if t.Bool("hostNetwork") {
		// Otherwise a host-network pod resolves with the node's DNS, which
		// knows no Service.
		t.SetDefault("dnsPolicy", ynode.String("ClusterFirstWithHostNet"))
	}
	return t, warnings
}

// overridden sets a pod spec field trainfn owns, warning when the template
// had set it to something else.
func overridden(t *pod.Template, name, value, why string) []render.Warning {
	replaced := t.Set(name, ynode.String(value))
	if replaced == nil || replaced.Value == value {
		return nil
	}
	return []render.Warning{{Field: t.Path(name), Message: fmt.Sprintf("replaced by %s: %s", value, why)}}
}
