package mpijob

import (
	"path"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/labels"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/naming"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// launcherJob runs mpirun once, on a pod whose hostname the hostfile and
// Hydra's proxies know, after its init container has seen every worker
// accept SSH.
func launcherJob(job *Job) (*yaml.RNode, []render.Warning, field.ErrorList) {
	t, warnings := job.PodTemplate(job.Launcher.Template, job.Launcher.Path, labels.RoleLauncher, job.Launcher.RestartPolicy)
	warnings = append(warnings, workload.Overridden(t, "hostname", naming.Launcher(job.Name), "the hostfile and Hydra's proxies know the launcher by it")...)

	main := t.Main()
	main.AddEnv("K_MPI_JOB_ROLE", labels.RoleLauncher)
	for _, e := range mpi.LauncherEnv(job.Implementation, job.SlotsPerWorker) {
		main.AddEnv(e.Name, e.Value)
	}
	if !job.RunLauncherAsWorker {
		// Keep the launcher off the node's GPUs when it does no work.
		main.AddEnv("NVIDIA_VISIBLE_DEVICES", "")
		main.AddEnv("NVIDIA_DRIVER_CAPABILITIES", "")
	}

	items := ynode.Seq(
		ynode.Map("key", mpi.HostfileKey, "path", mpi.HostfileKey, "mode", ynode.FileMode(0o444)),
		ynode.Map("key", mpi.DiscoverHostsKey, "path", mpi.DiscoverHostsKey, "mode", ynode.FileMode(0o555)),
	)
	// Only remote hosts need SSH, and a start-up to wait for.
	remote := job.workers() > 0
	var errs field.ErrorList
	if remote {
		items.Content = append(items.Content,
			ynode.Map("key", mpi.WaitForWorkersKey, "path", mpi.WaitForWorkersKey, "mode", ynode.FileMode(0o555)))
		errs = appendErr(errs, mountSSH(job, t, main))
	}
	errs = appendErr(errs, main.AddVolumeMount(configVolume, mpi.ConfigDir))
	errs = appendErr(errs, t.AddVolume(ynode.Map("name", configVolume, "configMap", ynode.Map(
		"name", naming.ConfigMap(job.Name), "items", items))))
	if remote {
		errs = appendErr(errs, t.AddInitContainer(waitForWorkers(job, main)))
	}

	return job.Object("batch/v1", "Job", naming.Launcher(job.Name), labels.Role(job.Name, labels.RoleLauncher),
		"spec", job.RunPolicy.JobSpec("template", t.Node())), warnings, errs
}

// waitForWorkers is the launcher's last init container. It runs as the main
// container does (same image, user, environment and resources), so the SSH
// it checks is the SSH mpirun will use, and it adds nothing to what the pod
// requests.
func waitForWorkers(job *Job, main *pod.Container) *yaml.Node {
	c := ynode.Map(
		"name", waitContainer,
		"image", copyOf(main.Get("image")),
		"imagePullPolicy", copyOf(main.Get("imagePullPolicy")),
		"command", []string{"/bin/sh", mpi.ConfigDir + "/" + mpi.WaitForWorkersKey},
		"env", copyOf(main.Get("env")),
		"envFrom", copyOf(main.Get("envFrom")),
		"resources", copyOf(main.Get("resources")),
		"securityContext", copyOf(main.Get("securityContext")),
		"volumeMounts", ynode.Seq(
			ynode.Map("name", sshVolume, "mountPath", job.SSHAuthMountPath),
			ynode.Map("name", configVolume, "mountPath", mpi.ConfigDir),
		),
	)
	// Shown with its default, so it can be patched; a value the launcher's
	// environment sets wins.
	pod.ContainerOf(c).AddEnv(mpi.WaitTimeoutEnv, mpi.DefaultWaitTimeout)
	return c
}

// workerJob runs one pod per worker as an Indexed Job: the Job controller
// gives pod i the hostname <job>-worker-i and replaces it when it fails,
// once the failed pod is gone, so that two pods never share a hostname.
func workerJob(job *Job) (*yaml.RNode, []render.Warning, field.ErrorList) {
	t, warnings := job.PodTemplate(job.Worker.Template, job.Worker.Path, labels.RoleWorker, job.Worker.RestartPolicy)
	if hostname := t.Remove("hostname"); hostname != nil {
		warnings = append(warnings, render.Warning{Field: t.Path("hostname"),
			Message: "ignored: the Indexed Job names the host of worker i " + naming.Workers(job.Name) + "-<i>"})
	}
	main := t.Main()
	if main.Get("command") == nil && main.Get("args") == nil {
		main.Set("command", ynode.Of([]string{"/usr/sbin/sshd", "-De"}))
	}
	main.AddEnv("K_MPI_JOB_ROLE", labels.RoleWorker)

	var errs field.ErrorList
	errs = appendErr(errs, mountSSH(job, t, main))

	n := job.Worker.Replicas
	return job.Object("batch/v1", "Job", naming.Workers(job.Name), labels.Role(job.Name, labels.RoleWorker),
		"spec", job.RunPolicy.JobSpec(
			"completionMode", "Indexed",
			"completions", n,
			"parallelism", n,
			"podReplacementPolicy", "Failed",
			"template", t.Node())), warnings, errs
}

// mountSSH mounts the job's SSH Secret at sshAuthMountPath: the private key
// as id_rsa, the public key as id_rsa.pub and authorized_keys. The files are
// root's own: readable by root alone when the pod runs as root (ssh refuses
// a private key others can read), readable by all otherwise, which ssh and
// sshd accept for a key that another user (root) owns.
func mountSSH(job *Job, t *pod.Template, main *pod.Container) *field.Error {
	root, known := t.RunsAsRoot()
	if !known {
		root = path.Clean(job.SSHAuthMountPath) == "/root/.ssh"
	}
	mode := int32(0o644)
	if root {
		mode = 0o600
	}
	if err := t.AddVolume(ynode.Map("name", sshVolume, "secret", ynode.Map(
		"secretName", naming.SSHSecret(job.Name),
		"defaultMode", ynode.FileMode(mode),
		"items", ynode.Seq(
			ynode.Map("key", "ssh-privatekey", "path", "id_rsa"),
			ynode.Map("key", "ssh-publickey", "path", "id_rsa.pub"),
			ynode.Map("key", "ssh-publickey", "path", "authorized_keys"),
		)))); err != nil {
		return err
	}
	return main.AddVolumeMount(sshVolume, job.SSHAuthMountPath)
}

func copyOf(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	return yaml.CopyYNode(n)
}

func appendErr(errs field.ErrorList, err *field.Error) field.ErrorList {
	if err != nil {
		return append(errs, err)
	}
	return errs
}
