package trainjob

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
	"github.com/trainfn/trainfn/render/waitfor"
)

// Trainer's constants for the frameworks it sets up.
const (
	mpiSSHAuthVolume   = "mpi-ssh-auth"
	mpiHostfileVolume  = "mpi-hostfile"
	mpiHostfileDir     = "/etc/mpi"
	mpiHostfileKey     = "hostfile"
	sshPublicKey       = "ssh-publickey"
	initializerEnvURI  = "STORAGE_URI"
	openMPIRSHArgs     = "-o ConnectionAttempts=10"
	torchTuneRdzvFlag  = "--rdzv_endpoint"
	torchTuneConfigArg = "--config"
)

// MPIHostfile is the ConfigMap of an MPI TrainJob's hostfile.
func MPIHostfile(job string) string { return job + "-mpi-hostfile" }

// trainerResources merges trainer.resourcesPerNode into the trainer's node
// container (and the node job's, when the launcher is a node too), resource
// by resource, as Trainer's MergeResourceRequirements does.
func (j *Job) trainerResources(p *plan) {
	t := j.Spec.Trainer
	if t == nil || t.ResourcesPerNode == nil {
		return
	}
	for i, r := range p.spec.ReplicatedJobs {
		if ancestor(r) != ancestorTrainer && !(p.launcherIsNode() && r.Name == nodeName) {
			continue
		}
		if c := p.container(i, nodeName); c != nil {
			c.Resources.Limits = mergedResources(c.Resources.Limits, t.ResourcesPerNode.Limits)
			c.Resources.Requests = mergedResources(c.Resources.Requests, t.ResourcesPerNode.Requests)
			for _, claim := range t.ResourcesPerNode.Claims {
				if k := slices.IndexFunc(c.Resources.Claims, func(e corev1.ResourceClaim) bool { return e.Name == claim.Name }); k >= 0 {
					c.Resources.Claims[k] = claim
				} else {
					c.Resources.Claims = append(c.Resources.Claims, claim)
				}
			}
		}
	}
}

func mergedResources(base, override corev1.ResourceList) corev1.ResourceList {
	if len(override) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = corev1.ResourceList{}
	}
	maps.Copy(out, override)
	return out
}

func (p *plan) launcherIsNode() bool {
	return p.mlPolicy.MPI != nil && p.mlPolicy.MPI.RunLauncherAsNode
}

// resourcesPerNode are the trainer's resources per node: the TrainJob's,
// else the runtime's node container's.
func (j *Job) resourcesPerNode(p *plan) corev1.ResourceRequirements {
	if t := j.Spec.Trainer; t != nil && t.ResourcesPerNode != nil {
		return *t.ResourcesPerNode
	}
	for i, r := range p.spec.ReplicatedJobs {
		if r.Name != nodeName && ancestor(r) != ancestorTrainer {
			continue
		}
		if c := p.container(i, nodeName); c != nil {
			return c.Resources
		}
	}
	return corev1.ResourceRequirements{}
}

// gpus is how many GPUs a node has, from the first resource whose name
// says gpu, requested, else limited.
func gpus(r corev1.ResourceRequirements) int {
	count := func(l corev1.ResourceList) int {
		for _, name := range slices.Sorted(maps.Keys(l)) {
			if strings.Contains(strings.ToLower(string(name)), "gpu") {
				q := l[name]
				return int(q.Value())
			}
		}
		return 0
	}
	if n := count(r.Requests); n > 0 {
		return n
	}
	return count(r.Limits)
}

func cpus(r corev1.ResourceRequirements) int {
	if q, ok := r.Requests[corev1.ResourceCPU]; ok && !q.IsZero() {
		return int(q.Value())
	}
	if q, ok := r.Limits[corev1.ResourceCPU]; ok {
		return int(q.Value())
	}
	return 0
}

// host is the first pod of a replicated job, by its JobSet hostname.
func (j *Job) host(job string) string {
	return fmt.Sprintf("%s-%s-0-0.%s", j.Name, job, j.Name)
}

// enforceMLPolicy sets up the runtime's framework, as Trainer's plugins
// do: the pod counts from trainer.numNodes, and the framework's
// environment on the trainer's node container.
func (j *Job) enforceMLPolicy(p *plan) field.ErrorList {
	t := j.Spec.Trainer
	trainer := p.byAncestor(ancestorTrainer)
	if t != nil && t.NumNodes != nil && trainer >= 0 && p.mlPolicy.MPI == nil {
		p.counts[trainer] = *t.NumNodes
	}
	var main *corev1.Container
	if t != nil {
		main = p.container(trainer, nodeName)
	}
	switch m := p.mlPolicy; {
	case m.Torch != nil:
		return j.torch(p, trainer, main)
	case m.MPI != nil:
		return j.mpi(p)
	case m.JAX != nil:
		if main != nil {
			upsertEnv(&main.Env,
				value("JAX_NUM_PROCESSES", strconv.Itoa(int(p.counts[trainer]))),
				fromField("JAX_PROCESS_ID", jobCompletionIndex),
				value("JAX_COORDINATOR_ADDRESS", fmt.Sprintf("%s:%d", j.host(nodeName), trainerPort)))
			upsertPort(&main.Ports, trainerPort)
		}
	case m.XGBoost != nil:
		if main != nil {
			perNode := max(1, gpus(j.resourcesPerNode(p)))
			upsertEnv(&main.Env, t.Env...)
			upsertEnv(&main.Env,
				value("DMLC_TRACKER_URI", j.host(nodeName)),
				value("DMLC_TRACKER_PORT", strconv.Itoa(trainerPort)),
				fromField("DMLC_TASK_ID", jobCompletionIndex),
				value("DMLC_NUM_WORKER", strconv.Itoa(int(p.counts[trainer])*perNode)))
			upsertPort(&main.Ports, trainerPort)
		}
	}
	return nil
}

// torch sets torchrun's PET_* variables and the master's address on the
// trainer's node container, and on the envInjection targets.
func (j *Job) torch(p *plan, trainer int, main *corev1.Container) field.ErrorList {
	t := j.Spec.Trainer
	res := j.resourcesPerNode(p)
	procs := "auto"
	if t != nil && t.NumProcPerNode != nil {
		procs = strconv.Itoa(int(*t.NumProcPerNode))
	} else if gpus(res) == 0 {
		procs = strconv.Itoa(max(1, cpus(res)))
	}
	nodes := int32(1)
	if trainer >= 0 {
		nodes = p.counts[trainer]
	}
	pet := []corev1.EnvVar{
		value("PET_NNODES", strconv.Itoa(int(nodes))),
		value("PET_NPROC_PER_NODE", procs),
		fromField("PET_NODE_RANK", jobCompletionIndex),
	}
	master := []corev1.EnvVar{
		value("PET_MASTER_ADDR", j.host(nodeName)),
		value("PET_MASTER_PORT", strconv.Itoa(trainerPort)),
	}
	if main != nil {
		upsertEnv(&main.Env, t.Env...)
		upsertEnv(&main.Env, pet...)
		if slices.Equal(t.Command, torchTuneEntrypoint) {
			p.trainerCommand = append(slices.Clone(t.Command), j.torchTuneArgs(nodes, procs, gpus(res), main)...)
		} else {
			upsertEnv(&main.Env, master...)
		}
		upsertPort(&main.Ports, trainerPort)
	}
	var errs field.ErrorList
	if inj := p.mlPolicy.Torch.EnvInjection; inj != nil {
		for ti, target := range inj.Targets {
			for ci, name := range target.ContainerNames {
				c := p.container(p.index(target.JobName), name)
				if c == nil {
					c = p.initContainer(p.index(target.JobName), name)
				}
				if c == nil {
					// Reported on the TrainJob, where the runtime is named;
					// the message places the runtime's field in its file.
					errs = append(errs, field.Invalid(field.NewPath("spec", "runtimeRef"), j.Spec.RuntimeRef.String(), fmt.Sprintf(
						"the runtime's spec.mlPolicy.torch.envInjection.targets[%d].containerNames[%d] (%s) names container %s of replicated job %s, which has none of that name",
						ti, ci, j.Runtime.Source, name, target.JobName)))
					continue
				}
				upsertEnv(&c.Env, pet...)
				upsertEnv(&c.Env, master...)
			}
		}
	}
	return errs
}

// initContainer finds an init container of a replicated job.
func (p *plan) initContainer(job int, name string) *corev1.Container {
	if job < 0 {
		return nil
	}
	cs := p.spec.ReplicatedJobs[job].Template.Spec.Template.Spec.InitContainers
	if i := slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == name }); i >= 0 {
		return &cs[i]
	}
	return nil
}

// mpi sets up an MPI runtime as Trainer's plugin does: the nodes' count,
// the slots, the SSH key and the hostfile mounted on the launcher and
// nodes, and the launcher's environment. Trainer knows Open MPI only;
// trainfn writes MPICH's and Intel MPI's hostfile and environment too.
func (j *Job) mpi(p *plan) field.ErrorList {
	m := p.mlPolicy.MPI
	t := j.Spec.Trainer
	if node := p.index(nodeName); node >= 0 && t != nil && t.NumNodes != nil {
		if m.RunLauncherAsNode {
			p.counts[node] = max(*t.NumNodes-1, 1)
		} else {
			p.counts[node] = *t.NumNodes
		}
	}
	if t != nil && t.NumProcPerNode != nil {
		m.NumProcPerNode = *t.NumProcPerNode
	} else if m.NumProcPerNode == 1 {
		if n := gpus(j.resourcesPerNode(p)); n > 1 {
			m.NumProcPerNode = int32(n)
		}
	}
	l := j.launch()
	p.launch = l
	if l != nil && l.mode == options.Rsh {
		if errs := checkRsh(p, launchModeField(j)); len(errs) > 0 {
			return errs
		}
	}
	for i, r := range p.spec.ReplicatedJobs {
		if r.Name != nodeName && r.Name != launcherName {
			continue
		}
		spec := p.podSpec(i)
		at := field.NewPath("spec", "runtimeRef")
		if l == nil {
			upsertVolume(&spec.Volumes, corev1.Volume{Name: mpiSSHAuthVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName:  handoff.MPISSHAuthSecretName(j.Name),
				DefaultMode: new(int32(0o400)),
				Items: []corev1.KeyToPath{
					{Key: corev1.SSHAuthPrivateKey, Path: "id_rsa", Mode: new(int32(0o640))},
					{Key: sshPublicKey, Path: "id_rsa.pub", Mode: new(int32(0o644))},
					{Key: sshPublicKey, Path: "authorized_keys", Mode: new(int32(0o644))},
				},
			}}})
		}
		if r.Name == launcherName {
			items := []corev1.KeyToPath{{Key: mpiHostfileKey, Path: mpiHostfileKey, Mode: new(int32(0o444))}}
			if l != nil {
				items = append(items, l.launcherFiles...)
			}
			upsertVolume(&spec.Volumes, hostfileVolume(MPIHostfile(j.Name), items))
		}
		c := p.container(i, nodeName)
		if c == nil {
			continue
		}
		switch {
		case l == nil:
			upsertVolumeMount(&c.VolumeMounts, corev1.VolumeMount{Name: mpiSSHAuthVolume, MountPath: m.SSHAuthMountPath})
		case r.Name == nodeName:
			p.warnings = append(p.warnings, l.serveNode(MPIHostfile(j.Name), spec, c, at)...)
		default:
			p.warnings = append(p.warnings, j.equipLauncher(l, spec, c, at)...)
		}
		if r.Name == launcherName {
			upsertVolumeMount(&c.VolumeMounts, corev1.VolumeMount{Name: mpiHostfileVolume, MountPath: mpiHostfileDir})
			upsertEnv(&c.Env, launcherEnv(m, l)...)
			spec.InitContainers = append(spec.InitContainers, waitForHosts(spec, c))
		}
	}
	return nil
}

// hostfileVolume is the hostfile's ConfigMap as a volume of the given
// keys.
func hostfileVolume(configMap string, items []corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: mpiHostfileVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
		Items:                items,
	}}}
}

// launcherEnv points mpirun at the hostfile: Trainer's variables for Open
// MPI over SSH, trainfn's otherwise, for MPICH and Intel MPI (Hydra),
// whose hostfile is in Hydra's format, and for the launch mode's remote
// shell.
func launcherEnv(m *runtimes.MPIPolicy, l *launch) []corev1.EnvVar {
	agent := ""
	if l != nil {
		agent = l.agent
	} else if implementation(m) == mpi.OpenMPI {
		return []corev1.EnvVar{
			value("OMPI_MCA_orte_default_hostfile", mpiHostfileDir+"/"+mpiHostfileKey),
			value("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
			value("OMPI_MCA_orte_set_default_slots", strconv.Itoa(int(m.NumProcPerNode))),
			value("OMPI_MCA_plm_rsh_args", openMPIRSHArgs),
		}
	}
	var out []corev1.EnvVar
	for _, e := range mpi.LauncherEnv(implementation(m), m.NumProcPerNode, agent) {
		out = append(out, value(e.Name, e.Value))
	}
	return out
}

// implementation is the policy's MPI implementation; "" is Open MPI, as
// Trainer's enum allows it for its default.
func implementation(m *runtimes.MPIPolicy) mpi.Implementation {
	if m.MPIImplementation == "" {
		return mpi.OpenMPI
	}
	return mpi.Implementation(m.MPIImplementation)
}

// waitForHosts is an init container that holds the launcher back until
// every host of its hostfile resolves, its own name included: mpirun run
// sooner takes a name it cannot resolve for a remote host, and fails. It
// runs in the launcher's image, as the launcher's user, so it needs none of
// its own, with none of its privileges (pod.CopiedSecurity): it only
// resolves names. The runtime's dependsOn has the launcher wait for the
// nodes to accept connections.
func waitForHosts(spec *corev1.PodSpec, launcher *corev1.Container) corev1.Container {
	hostfile := mpiHostfileDir + "/" + mpiHostfileKey
	return corev1.Container{
		Name:            "wait-for-hosts",
		Image:           launcher.Image,
		ImagePullPolicy: launcher.ImagePullPolicy,
		Command:         []string{"/bin/sh", "-c", waitfor.HostfileScript, "wait-for-hosts", hostfile},
		Resources:       launcher.Resources,
		SecurityContext: pod.CopiedSecurity(launcher.SecurityContext, spec, false),
		VolumeMounts:    []corev1.VolumeMount{{Name: mpiHostfileVolume, MountPath: mpiHostfileDir}},
	}
}
