package trainjob

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
)

// launch is how an MPI runtime's launcher reaches its nodes in one of
// trainfn's launch modes other than SSH, Trainer's only one: mpirun's
// remote shell, what the nodes run and mount for it in place of the
// runtime's sshd, and when they are ready for it. The runtime's dependsOn
// (the launcher waits for the nodes to be Ready) then waits for that.
type launch struct {
	mode options.LaunchMode
	// agent is mpirun's remote shell.
	agent string
	// serve is the nodes' command, serves the same in words, and ready
	// the nodes' readiness probe (nil: ready once started).
	serve  []string
	serves string
	ready  *corev1.Probe
	// files are what the hostfile's ConfigMap holds for the mode;
	// launcherFiles and nodeFiles the keys each mounts at mpi.ConfigDir.
	files                    map[string]string
	launcherFiles, nodeFiles []corev1.KeyToPath
}

// kubectlVolume is the launcher's volume that kubectl is delivered to in
// the KubectlExec launch mode, by an init container of deliveryResources.
const kubectlVolume = "kubectl"

// deliveryResources are new maps for each Job, which later steps may edit.
func deliveryResources() corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(mpi.DeliveryCPU), corev1.ResourceMemory: resource.MustParse(mpi.DeliveryMemory)}
	return corev1.ResourceRequirements{Limits: l, Requests: l.DeepCopy()}
}

// launch is the job's launch mode for an MPI runtime; nil for SSH, which
// the runtime's own sshd serves as Trainer has it.
func (j *Job) launch() *launch {
	item := func(key string, mode int32) corev1.KeyToPath {
		return corev1.KeyToPath{Key: key, Path: key, Mode: new(mode)}
	}
	switch j.LaunchMode {
	case options.KubectlExec:
		kubexec := item(mpi.KubexecKey, 0o555)
		return &launch{
			mode:   options.KubectlExec,
			agent:  mpi.ConfigDir + "/" + mpi.KubexecKey,
			serve:  mpi.Idle,
			serves: "an idle shell, which stops when told, while the launcher's mpirun starts processes in them through kubectl exec",
			files:  map[string]string{mpi.KubexecKey: mpi.Kubexec(nodeName, mpi.JobOfHost)},
			// Open MPI 4's orted stops when the remote shell mpirun names
			// is not there, on the nodes too.
			launcherFiles: []corev1.KeyToPath{kubexec},
			nodeFiles:     []corev1.KeyToPath{kubexec},
		}
	case options.Rsh:
		return &launch{
			mode:   options.Rsh,
			agent:  mpi.RshAgent,
			serve:  []string{"/bin/sh", mpi.ConfigDir + "/" + mpi.ServeRshKey},
			serves: "an rsh server (" + mpi.ConfigDir + "/" + mpi.ServeRshKey + "), which the launcher's mpirun reaches them with",
			// Probed every second: the launcher waits for it, and the
			// kubelet's default period, 10 s, can hold it back that long.
			ready: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(mpi.RshPort)}},
				PeriodSeconds: 1,
			},
			files: map[string]string{mpi.ServeRshKey: mpi.ServeRsh, mpi.RshdConfKey: mpi.RshdConf},
			nodeFiles: []corev1.KeyToPath{
				item(mpi.ServeRshKey, 0o555),
				item(mpi.RshdConfKey, 0o444),
			},
		}
	}
	return nil
}

// launchModeField is where the job's launch mode is chosen: its own
// annotation, or else the run's, which is the runtime's to carry out.
func launchModeField(j *Job) *field.Path {
	if j.Annotated {
		return field.NewPath("metadata", "annotations").Key(options.LaunchModeAnnotation)
	}
	return field.NewPath("spec", "runtimeRef")
}

// serveNode has a node serve the launch mode in place of the runtime's
// sshd, and mount what it needs; the runtime's readiness probe, which
// waits for sshd, gives way to the mode's.
func (l *launch) serveNode(configMap string, spec *corev1.PodSpec, c *corev1.Container, at *field.Path) []result.Warning {
	var warnings []result.Warning
	if was := strings.Join(append(append([]string{}, c.Command...), c.Args...), " "); was != strings.Join(l.serve, " ") {
		warnings = append(warnings, result.Warning{Field: at, Message: fmt.Sprintf(
			"the runtime's node command (%s) is replaced: in the %s launch mode the nodes run %s", was, l.mode, l.serves)})
	}
	c.Command, c.Args = l.serve, nil
	c.ReadinessProbe = l.ready
	if len(l.nodeFiles) > 0 {
		upsertVolume(&spec.Volumes, hostfileVolume(configMap, l.nodeFiles))
		upsertVolumeMount(&c.VolumeMounts, corev1.VolumeMount{Name: mpiHostfileVolume, MountPath: mpiHostfileDir})
	}
	return warnings
}

// equipLauncher gives the launcher what the mode's remote shell needs: in
// the KubectlExec launch mode kubectl (delivered, unless the launcher's
// image has it, by an init container of the run's delivery image, which
// runs as the pod's non-root user, else nobody: pod.OwnImageSecurity) and
// a ServiceAccount whose Role lets it exec into the namespace's pods.
func (j *Job) equipLauncher(l *launch, spec *corev1.PodSpec, c *corev1.Container, at *field.Path) []result.Warning {
	if l.mode != options.KubectlExec {
		return nil
	}
	var warnings []result.Warning
	account := handoff.LauncherName(j.Name)
	if spec.ServiceAccountName != "" && spec.ServiceAccountName != account {
		warnings = append(warnings, result.Warning{Field: at, Message: fmt.Sprintf(
			"the runtime's launcher's serviceAccountName (%s) is replaced by %s: its Role lets the launcher exec into this job's nodes", spec.ServiceAccountName, account)})
	}
	spec.ServiceAccountName = account
	if spec.AutomountServiceAccountToken != nil && !*spec.AutomountServiceAccountToken {
		warnings = append(warnings, result.Warning{Field: at,
			Message: "the runtime's launcher's automountServiceAccountToken is replaced by true: kubectl exec needs the launcher's token"})
	}
	spec.AutomountServiceAccountToken = new(true)
	upsertVolume(&spec.Volumes, corev1.Volume{Name: kubectlVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	upsertVolumeMount(&c.VolumeMounts, corev1.VolumeMount{Name: kubectlVolume, MountPath: mpi.KubectlDir})
	if j.KubectlDeliveryImage != "" {
		spec.InitContainers = append(spec.InitContainers, corev1.Container{
			Name:            mpi.DeliveryContainer,
			Image:           j.KubectlDeliveryImage,
			Command:         mpi.DeliveryCommand,
			Resources:       deliveryResources(),
			SecurityContext: pod.OwnImageSecurity(spec),
			VolumeMounts:    []corev1.VolumeMount{{Name: kubectlVolume, MountPath: mpi.KubectlDir}},
		})
	}
	return warnings
}

// launchObjects are what the mode needs beside the Jobs: the launcher's
// ServiceAccount and Role in the KubectlExec launch mode; in the Rsh
// launch mode the NetworkPolicy its trust rests on, under which the nodes
// admit the job's own pods alone (rshd trusts any peer that connects from
// a privileged port).
func (j *Job) launchObjects(l *launch, p *plan) []*yaml.RNode {
	own := p.objectLabels(j.Name)
	switch l.mode {
	case options.KubectlExec:
		// The nodes are Indexed Jobs, <job>-node-<j>, whose pods' names
		// the Job controller makes up: the Role reaches the namespace's
		// pods, and says what the nodes' pods' names are.
		var jobs []string
		completions := 0
		if i := p.index(nodeName); i >= 0 {
			for idx := range int(p.spec.ReplicatedJobs[i].Replicas) {
				jobs = append(jobs, fmt.Sprintf("%s-%s-%d", j.Name, nodeName, idx))
			}
			completions = int(p.counts[i])
		}
		pods := handoff.IndexedPodNames(completions, jobs...)
		// Labelled as an MPIJob's launcher's are, whatever reads them.
		launcher := merged(own, map[string]string{handoff.JobRoleLabel: handoff.RoleLauncher})
		return j.ExecAccess(handoff.LauncherName(j.Name), launcher, pods)
	case options.Rsh:
		return []*yaml.RNode{j.AdmitOnly(handoff.RshPolicyName(j.Name), own,
			map[string]string{jobSetNameLabel: j.Name, replicatedJobNameLabel: nodeName},
			map[string]string{jobSetNameLabel: j.Name})}
	}
	return nil
}

// checkRsh refuses what the Rsh launch mode cannot keep safe or run: a
// pod on the host's network, which no NetworkPolicy covers, and nodes
// that do not run as root, as rshd must.
func checkRsh(p *plan, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range p.spec.ReplicatedJobs {
		if r.Name != nodeName && r.Name != launcherName {
			continue
		}
		spec := p.podSpec(i)
		if spec.HostNetwork {
			errs = append(errs, field.Invalid(at, "Rsh", fmt.Sprintf(
				"the runtime's %s runs on the host's network, which the NetworkPolicy that keeps rsh to the job's pods does not cover: use the SSH launch mode", r.Name)))
		}
		if c := p.container(i, nodeName); r.Name == nodeName && c != nil {
			if user := nonRoot(spec, c); user != "" {
				errs = append(errs, field.Invalid(at, "Rsh", fmt.Sprintf(
					"the runtime's nodes run as %s, and in the Rsh launch mode they run rshd, which runs as root: let them run as root (a runtimePatch), or use the SSH launch mode", user)))
			}
		}
	}
	return errs
}

// nonRoot is the user a container runs as, in words, when its pod says
// it is not root; "" when it is root, or the image's user.
func nonRoot(spec *corev1.PodSpec, c *corev1.Container) string {
	var user *int64
	var nonRoot bool
	for _, s := range []*corev1.SecurityContext{c.SecurityContext, podSecurity(spec)} {
		if s != nil && user == nil {
			user = s.RunAsUser
		}
		nonRoot = nonRoot || s != nil && s.RunAsNonRoot != nil && *s.RunAsNonRoot
	}
	switch {
	case user != nil && *user != 0:
		return fmt.Sprintf("uid %d", *user)
	case user == nil && nonRoot:
		return "non-root (runAsNonRoot)"
	}
	return ""
}

// podSecurity is the part of a pod's security context its containers
// inherit.
func podSecurity(spec *corev1.PodSpec) *corev1.SecurityContext {
	if s := spec.SecurityContext; s != nil {
		return &corev1.SecurityContext{RunAsUser: s.RunAsUser, RunAsNonRoot: s.RunAsNonRoot}
	}
	return nil
}
