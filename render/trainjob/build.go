package trainjob

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/kueue"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// JobSet's labels, which it puts on each Job and its pods.
const (
	jobSetNameLabel        = "jobset.sigs.k8s.io/jobset-name"
	replicatedJobNameLabel = "jobset.sigs.k8s.io/replicatedjob-name"
	replicatedJobReplicas  = "jobset.sigs.k8s.io/replicatedjob-replicas"
	globalReplicasLabel    = "jobset.sigs.k8s.io/global-replicas"
	jobIndexLabel          = "jobset.sigs.k8s.io/job-index"
	jobGlobalIndexLabel    = "jobset.sigs.k8s.io/job-global-index"
	groupNameLabel         = "jobset.sigs.k8s.io/group-name"
	groupReplicasLabel     = "jobset.sigs.k8s.io/group-replicas"
	jobGroupIndexLabel     = "jobset.sigs.k8s.io/job-group-index"
	restartAttemptLabel    = "jobset.sigs.k8s.io/restart-attempt"
	coordinatorLabel       = "jobset.sigs.k8s.io/coordinator"
)

// Build expands the job into the objects Trainer and JobSet would create:
// the headless Service, the Jobs of every replicated job and, for MPI, the
// hostfile's ConfigMap. Its gang is every Job.
func (j *Job) Build() (result.Output, gang.Gang, field.ErrorList) {
	p, errs := j.newPlan()
	if len(errs) > 0 {
		return result.Output{}, gang.Gang{}, errs
	}
	if errs := j.webhookErrors(p); len(errs) > 0 {
		return result.Output{}, gang.Gang{}, errs
	}
	j.trainerResources(p)
	if errs := j.resourceErrors(p); len(errs) > 0 {
		return result.Output{}, gang.Gang{}, errs
	}
	if errs := j.enforceMLPolicy(p); len(errs) > 0 {
		return result.Output{}, gang.Gang{}, errs
	}
	j.initializers(p)
	j.trainerOverrides(p)

	var out result.Output
	out.Warnings = j.warnings(p)
	subdomain := j.Name
	publish := true
	if n := p.spec.Network; n != nil {
		if n.Subdomain != "" {
			subdomain = n.Subdomain
		}
		if n.PublishNotReadyAddresses != nil {
			publish = *n.PublishNotReadyAddresses
		}
	}
	service := j.Object("v1", "Service", subdomain, p.objectLabels(j.Name),
		"spec", ynode.Map(
			"clusterIP", "None",
			"selector", ynode.StringMap(map[string]string{jobSetNameLabel: j.Name}),
			"publishNotReadyAddresses", publish))
	out.Objects = append(out.Objects, service)
	if m := p.mlPolicy.MPI; m != nil {
		data := map[string]string{mpiHostfileKey: j.hostfile(p, subdomain)}
		l := p.launch
		if l != nil {
			maps.Copy(data, l.files)
		}
		out.Objects = append(out.Objects, j.Object("v1", "ConfigMap", MPIHostfile(j.Name), p.objectLabels(j.Name),
			"data", ynode.StringMap(data)))
		if l != nil {
			out.Objects = append(out.Objects, j.launchObjects(l, p)...)
		}
		if mpi.LaunchesBackToLauncher(implementation(m)) && p.index(launcherName) >= 0 {
			// Hydra's remote proxies dial the launcher by its short
			// hostname, which resolves as a Service name in the namespace.
			launcher := fmt.Sprintf("%s-%s-0-0", j.Name, launcherName)
			out.Objects = append(out.Objects, j.Object("v1", "Service", launcher, p.objectLabels(j.Name),
				"spec", ynode.Map(
					"clusterIP", "None",
					"selector", ynode.StringMap(map[string]string{jobSetNameLabel: j.Name, replicatedJobNameLabel: launcherName}),
					"publishNotReadyAddresses", true)))
		}
	}

	claims, err := j.claims(p)
	if err != nil {
		return result.Output{}, gang.Gang{}, field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
	}
	out.Objects = append(out.Objects, claims...)

	g := gang.Gang{Owner: j.Owner, Policy: j.gangPolicy(p)}
	global := 0
	for i, r := range p.spec.ReplicatedJobs {
		for idx := range int(r.Replicas) {
			job, template, err := j.job(p, i, idx, global, subdomain)
			if err != nil {
				return result.Output{}, gang.Gang{}, field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
			}
			out.Objects = append(out.Objects, job)
			g.Members = append(g.Members, gang.Member{Workload: job, Template: template, Pods: p.counts[i]})
			global++
		}
	}
	return out, g, nil
}

// initializers point the dataset and model initializers at the job's
// storage, as Trainer's builder does.
func (j *Job) initializers(p *plan) {
	in := j.Spec.Initializer
	for i, r := range p.spec.ReplicatedJobs {
		var s *StorageInitializer
		switch a := ancestor(r); {
		case a == datasetInitializer && in != nil:
			s = in.Dataset
		case a == modelInitializer && in != nil:
			s = in.Model
		}
		if a := ancestor(r); a == datasetInitializer || a == modelInitializer {
			p.spec.ReplicatedJobs[i].Replicas = 1
		}
		c := p.container(i, ancestor(r))
		if s == nil || c == nil {
			continue
		}
		if s.StorageURI != nil {
			upsertEnv(&c.Env, value(initializerEnvURI, *s.StorageURI))
		}
		upsertEnv(&c.Env, s.Env...)
		if s.SecretRef != nil {
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: *s.SecretRef}})
		}
	}
}

// trainerOverrides set the trainer's image, command, args and env on its
// node container, as Trainer's builder does; trainfn also sets the env on
// every MPI node, so that it reaches every rank.
func (j *Job) trainerOverrides(p *plan) {
	t := j.Spec.Trainer
	for i, r := range p.spec.ReplicatedJobs {
		trainer := ancestor(r) == ancestorTrainer
		if trainer {
			p.spec.ReplicatedJobs[i].Replicas = 1
		}
		c := p.container(i, nodeName)
		if c == nil || t == nil {
			continue
		}
		if trainer {
			if t.Image != nil {
				c.Image = *t.Image
			}
			if p.trainerCommand != nil {
				c.Command = p.trainerCommand
			} else if t.Command != nil {
				c.Command = t.Command
			}
			if t.Args != nil {
				c.Args = t.Args
			}
		}
		if trainer || p.mlPolicy.MPI != nil && r.Name == nodeName {
			upsertEnv(&c.Env, t.Env...)
		}
	}
}

// hostfile lists the MPI nodes, in the runtime's order of replicated jobs
// (Trainer's runtimes list the launcher last), each with the slots of a
// node, in the implementation's format.
func (j *Job) hostfile(p *plan, subdomain string) string {
	m := p.mlPolicy.MPI
	var hosts []handoff.Host
	for i, r := range p.spec.ReplicatedJobs {
		if r.Name != nodeName && !(m.RunLauncherAsNode && r.Name == launcherName) {
			continue
		}
		for idx := range int(r.Replicas) {
			for k := range int(p.counts[i]) {
				host := fmt.Sprintf("%s-%s-%d-%d.%s", j.Name, r.Name, idx, k, subdomain)
				if r.Name == launcherName && mpi.LaunchesBackToLauncher(implementation(m)) {
					// Hydra knows its own host by its hostname alone, and
					// would ssh to any other name of it; the launcher's
					// Service makes that name resolve on the nodes.
					host = fmt.Sprintf("%s-%s-%d-%d", j.Name, r.Name, idx, k)
				}
				hosts = append(hosts, handoff.Host{Name: host, Slots: m.NumProcPerNode})
			}
		}
	}
	return mpi.Hostfile(implementation(m), hosts)
}

// job is the idx-th Job of a replicated job, labelled as JobSet labels it.
func (j *Job) job(p *plan, i, idx, global int, subdomain string) (*yaml.RNode, *pod.Template, error) {
	r := p.spec.ReplicatedJobs[i]
	name := fmt.Sprintf("%s-%s-%d", j.Name, r.Name, idx)
	labels := map[string]string{
		jobSetNameLabel:        j.Name,
		replicatedJobNameLabel: r.Name,
		replicatedJobReplicas:  strconv.Itoa(int(r.Replicas)),
		globalReplicasLabel:    strconv.Itoa(p.globalReplicas()),
		jobIndexLabel:          strconv.Itoa(idx),
		jobGlobalIndexLabel:    strconv.Itoa(global),
		groupNameLabel:         r.GroupName,
		groupReplicasLabel:     strconv.Itoa(p.groupReplicas(r.GroupName)),
		jobGroupIndexLabel:     strconv.Itoa(p.groupIndex(i, idx)),
		restartAttemptLabel:    "0",
	}
	maps.Copy(labels, handoff.RoleLabels(j.Name, p.role(r.Name)))
	if c := p.spec.Coordinator; c != nil {
		labels[coordinatorLabel] = fmt.Sprintf("%s-%s-%d-%d.%s", j.Name, c.ReplicatedJob, c.JobIndex, c.PodIndex, subdomain)
	}
	spec := r.Template.Spec
	count := p.counts[i]
	spec.Parallelism, spec.Completions = &count, &count
	indexed := batchv1.IndexedCompletion
	spec.CompletionMode = &indexed
	if j.Spec.Suspend {
		spec.Suspend = new(true)
	}
	if d := j.Spec.ActiveDeadlineSeconds; d != nil && spec.ActiveDeadlineSeconds == nil {
		spec.ActiveDeadlineSeconds = d
	}
	if j.Spec.ManagedBy != managedByTrainer {
		spec.ManagedBy = &j.Spec.ManagedBy
	}
	t := &spec.Template
	t.Labels = merged(merged(t.Labels, kueue.PodLabels(j.Labels)), labels)
	j.claimVolumes(p, &t.Spec)
	if deps := p.dependencies(j.Name, r); deps != "" {
		// JobSet creates a dependent's Jobs once what it depends on is so;
		// here they exist from the start, their pods held until then.
		t.Annotations = merged(t.Annotations, map[string]string{handoff.DependsOn: deps})
		t.Spec.SchedulingGates = append(t.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: handoff.DependsOnGate})
	}
	t.Spec.Subdomain = subdomain
	if t.Spec.RestartPolicy == "" {
		t.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	}
	templateNode, err := ynode.FromTyped(t)
	if err != nil {
		return nil, nil, err
	}
	template := pod.NewTemplate(yaml.NewRNode(templateNode), field.NewPath("spec", "template"))
	spec.Template = corev1.PodTemplateSpec{}
	specNode, err := ynode.FromTyped(spec)
	if err != nil {
		return nil, nil, err
	}
	// The template last, as Jobs are written.
	_ = yaml.NewRNode(specNode).PipeE(yaml.Clear("template"))
	ynode.Set(specNode, "template", template.Node())
	// The JobSet's labels: here the Jobs are the JobSet.
	jobLabels := merged(merged(p.labels, r.Template.Labels), labels)
	obj := j.Object("batch/v1", "Job", name, jobLabels, "spec", specNode)
	if len(r.Template.Annotations) > 0 {
		workload.Annotate(obj, r.Template.Annotations)
	}
	if leader := p.leader(j.Name); leader != "" && r.Name != p.spec.SuccessPolicy.TargetReplicatedJobs[0] {
		// JobSet stops the Jobs still running once the JobSet succeeded:
		// here the reconciler does, when the Job that ends the job ends.
		workload.Annotate(obj, map[string]string{handoff.EndsWith: handoff.EndsWithJob(leader), handoff.CleanPodPolicy: "All"})
	}
	return obj, template, nil
}

// dependencies are the Jobs a replicated job's pods wait for, with the
// status each must reach, in the DependsOn annotation's format.
func (p *plan) dependencies(job string, r runtimes.ReplicatedJob) string {
	var deps []string
	for _, d := range r.DependsOn {
		i := p.index(d.Name)
		if i < 0 {
			continue // refused by Check
		}
		for idx := range int(p.spec.ReplicatedJobs[i].Replicas) {
			deps = append(deps, fmt.Sprintf("%s-%s-%d=%s", job, d.Name, idx, d.Status))
		}
	}
	return strings.Join(deps, ",")
}

// leader is the one Job whose success is the job's, when the success
// policy names one (an MPI runtime's launcher); "" otherwise.
func (p *plan) leader(job string) string {
	s := p.spec.SuccessPolicy
	if s == nil || len(s.TargetReplicatedJobs) != 1 {
		return ""
	}
	i := p.index(s.TargetReplicatedJobs[0])
	if i < 0 || p.spec.ReplicatedJobs[i].Replicas != 1 {
		return ""
	}
	return fmt.Sprintf("%s-%s-0", job, s.TargetReplicatedJobs[0])
}

// role is the role label of a replicated job's pods: an MPI runtime's
// launcher and nodes are the launcher and workers trainfn's reconciler and
// status know; others are named as the replicated job.
func (p *plan) role(name string) string {
	if p.mlPolicy.MPI != nil {
		switch name {
		case launcherName:
			return handoff.RoleLauncher
		case nodeName:
			return handoff.RoleWorker
		}
	}
	return name
}

// objectLabels are the labels of the job's objects but its Jobs: the
// runtime's and the patches', and those that find the job's objects.
func (p *plan) objectLabels(job string) map[string]string {
	return merged(p.labels, handoff.JobLabels(job))
}

func (p *plan) globalReplicas() int {
	n := 0
	for _, r := range p.spec.ReplicatedJobs {
		n += int(r.Replicas)
	}
	return n
}

func (p *plan) groupReplicas(group string) int {
	n := 0
	for _, r := range p.spec.ReplicatedJobs {
		if r.GroupName == group {
			n += int(r.Replicas)
		}
	}
	return n
}

func (p *plan) groupIndex(i, idx int) int {
	n := 0
	for _, r := range p.spec.ReplicatedJobs[:i] {
		if r.GroupName == p.spec.ReplicatedJobs[i].GroupName {
			n += int(r.Replicas)
		}
	}
	return n + idx
}

// claims are the PersistentVolumeClaims of the runtime's
// volumeClaimPolicies, named as JobSet names them: <template>-<job>.
func (j *Job) claims(p *plan) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, policy := range p.spec.VolumeClaimPolicies {
		for _, t := range policy.Templates {
			spec, err := ynode.FromTyped(t.Spec)
			if err != nil {
				return nil, err
			}
			out = append(out, j.Object("v1", "PersistentVolumeClaim", claimName(j.Name, t.Name), merged(p.objectLabels(j.Name), t.Labels), "spec", spec))
		}
	}
	return out, nil
}

func claimName(job, template string) string { return template + "-" + job }

// claimVolumes add, as JobSet does, a volume of each claim the pod's
// containers mount and the pod does not declare.
func (j *Job) claimVolumes(p *plan, spec *corev1.PodSpec) {
	mounted := func(name string) bool {
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			if slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == name }) {
				return true
			}
		}
		return false
	}
	for _, policy := range p.spec.VolumeClaimPolicies {
		for _, t := range policy.Templates {
			if !mounted(t.Name) || slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == t.Name }) {
				continue
			}
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(j.Name, t.Name)}}})
		}
	}
}
