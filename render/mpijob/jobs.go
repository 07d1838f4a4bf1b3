package mpijob

import (
	"path"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// launcherJob runs mpirun, on a pod whose hostname the hostfile and
// Hydra's proxies know, through launch.sh: at every attempt once every
// worker accepts SSH (or rsh, or kubectl exec), telling a worker when the
// job has ended. When writesHosts, the ConfigMap has no hostfile but a
// script that writes it, which an init container runs first.
func launcherJob(job *Job, writesHosts bool) (*yaml.RNode, *pod.Template, []result.Warning, field.ErrorList) {
	t, warnings := job.podTemplate(&job.Launcher, handoff.RoleLauncher, job.Launcher.RestartPolicy)
	warnings = append(warnings, workload.Overridden(t, "hostname", handoff.LauncherName(job.Name), "the hostfile and Hydra's proxies know the launcher by it")...)

	main := job.main(t)
	main.AddEnv("K_MPI_JOB_ROLE", handoff.RoleLauncher)
	for _, e := range mpi.LauncherEnv(job.Implementation, job.SlotsPerWorker, modeOf(job.launchMode()).agent) {
		main.AddEnv(e.Name, e.Value)
	}
	if !job.RunLauncherAsWorker {
		// Keep the launcher off the node's GPUs when it does no work.
		main.AddEnv("NVIDIA_VISIBLE_DEVICES", "")
		main.AddEnv("NVIDIA_DRIVER_CAPABILITIES", "")
	}

	items := ynode.Seq(
		configItem(mpi.HostfileKey, 0o444),
		configItem(handoff.DiscoverHostsKey, 0o555),
	)
	// The volume the launcher's containers find at mpi.ConfigDir.
	files := configVolume
	if writesHosts {
		items = ynode.Seq(configItem(mpi.WriteHostsKey, 0o555))
		files = hostsVolume
	}
	// Only remote hosts need a remote shell, and a start-up to wait for.
	remote := job.workers() > 0
	var errs field.ErrorList
	// shell is the volume the remote shell needs: kubectl or the SSH key;
	// rsh needs none.
	var shell *yaml.Node
	if remote {
		items.Content = append(items.Content,
			configItem(mpi.WaitForWorkersKey, 0o555))
		switch job.launchMode() {
		case options.KubectlExec:
			items.Content = append(items.Content,
				configItem(mpi.KubexecKey, 0o555))
			warnings = append(warnings, workload.Overridden(t, "serviceAccountName", handoff.LauncherName(job.Name),
				"its Role lets the launcher exec into this job's workers")...)
			if old := t.Set("automountServiceAccountToken", ynode.Of(true)); old != nil && old.Value != "true" {
				warnings = append(warnings, result.Warning{Field: t.Path("automountServiceAccountToken"),
					Message: "replaced by true: kubectl exec needs the launcher's token"})
			}
			errs = appendErr(errs, mountKubectl(job, t, main))
			shell = ynode.Map("name", kubectlVolume, "mountPath", mpi.KubectlDir)
		case options.SSH:
			errs = appendErr(errs, mountLauncherSSH(job, t, main))
			shell = ynode.Map("name", sshVolume, "mountPath", job.SSHAuthMountPath)
		}
	}
	errs = appendErr(errs, main.AddVolumeMount(files, mpi.ConfigDir))
	errs = appendErr(errs, t.AddVolume(ynode.Map("name", configVolume, "configMap", ynode.Map(
		"name", handoff.ConfigMapName(job.Name), "items", items))))
	if writesHosts {
		errs = appendErr(errs, t.AddVolume(ynode.Map("name", hostsVolume, "emptyDir", ynode.Map())))
		errs = appendErr(errs, t.AddInitContainer(writeHosts(t, main)))
	}
	// waits is the container the wait for the workers runs in, if any.
	var waits string
	if remote {
		reach := reachOverSSH(job)
		warnings = append(warnings, reach.warnings...)
		wrapped, ws, err := job.launchAround(t, main)
		warnings = append(warnings, ws...)
		errs = appendErr(errs, err)
		waits = waitContainer
		if wrapped {
			items.Content = append(items.Content,
				configItem(mpi.LaunchKey, 0o555))
			setWaitEnv(main, reach)
			waits = main.Name()
		} else {
			rsh := job.launchMode() == options.Rsh
			errs = appendErr(errs, t.AddInitContainer(waitForWorkers(t, main, shell, files, reach, rsh)))
			// The wait's mark, for its retries in this pod.
			errs = appendErr(errs, t.AddVolume(runDirVolume()))
		}
	}
	spec := []any{"template", t.Node()}
	if t.String("restartPolicy") == "Never" {
		spec = append(spec, "podFailurePolicy", launcherFailurePolicy(waits))
	}

	return job.Object("batch/v1", "Job", handoff.LauncherName(job.Name), handoff.RoleLabels(job.Name, handoff.RoleLauncher),
		"spec", job.RunPolicy.JobSpec(spec...)), t, warnings, errs
}

// launcherFailurePolicy is the podFailurePolicy of a launcher whose pods
// restart Never: a disruption does not count, and the wait's word that the
// workers are gone, from the container it runs in, fails the Job at once,
// with that word in its condition: a new pod would not know that the
// workers had been placed, and would wait for them as for room.
func launcherFailurePolicy(waits string) *yaml.Node {
	rules := ynode.Seq(workload.DisruptionRule())
	if waits != "" {
		rules.Content = append(rules.Content, ynode.Map("action", "FailJob", "onExitCodes", ynode.Map(
			"containerName", waits, "operator", "In", "values", ynode.Seq(ynode.Of(mpi.WorkersGoneExitCode)))))
	}
	return ynode.Map("rules", rules)
}

// mountKubectl gives the launcher kubectl: an init container of the
// delivery image copies it into a volume the launcher mounts, unless the
// launcher's image brings its own (mpi.DeliveryContainer says how). The
// container runs as the pod's non-root user, else nobody, whatever the
// launcher's container runs as (pod.OwnImageSecurity): kubectl, mode 0755
// in the image, is copied with that mode into the emptyDir, which the
// kubelet makes writable by all, and the launcher's user runs it whoever
// copied it.
func mountKubectl(job *Job, t *pod.Template, main *pod.Container) *field.Error {
	if err := t.AddVolume(ynode.Map("name", kubectlVolume, "emptyDir", ynode.Map())); err != nil {
		return err
	}
	if err := main.AddVolumeMount(kubectlVolume, mpi.KubectlDir); err != nil {
		return err
	}
	image := job.Options.MPI.KubectlDeliveryImage
	if image == "" {
		return nil
	}
	return t.AddInitContainer(ynode.Map(
		"name", mpi.DeliveryContainer,
		"image", image,
		"command", mpi.DeliveryCommand,
		"resources", ynode.Map(
			"limits", ynode.Map("cpu", mpi.DeliveryCPU, "memory", mpi.DeliveryMemory),
			"requests", ynode.Map("cpu", mpi.DeliveryCPU, "memory", mpi.DeliveryMemory)),
		"securityContext", t.OwnImageSecurity(),
		"volumeMounts", ynode.Seq(ynode.Map("name", kubectlVolume, "mountPath", mpi.KubectlDir)),
	))
}

// writeHosts is the launcher's first init container when its ConfigMap
// cannot list the hosts: from the ConfigMap, mounted apart, it fills the
// volume the launcher has at mpi.ConfigDir with the hostfile, the
// discovery script and the ConfigMap's scripts. It runs as the main
// container does, for the reasons waitForWorkers gives.
func writeHosts(t *pod.Template, main *pod.Container) *yaml.Node {
	return ynode.Map(
		"name", writeHostsContainer,
		"image", copyOf(main.Get("image")),
		"imagePullPolicy", copyOf(main.Get("imagePullPolicy")),
		"command", []string{"/bin/sh", configMapDir + "/" + mpi.WriteHostsKey, configMapDir, mpi.ConfigDir},
		"resources", copyOf(main.Get("resources")),
		"securityContext", t.CopiedSecurity(main, false),
		"volumeMounts", ynode.Seq(
			ynode.Map("name", configVolume, "mountPath", configMapDir),
			ynode.Map("name", hostsVolume, "mountPath", mpi.ConfigDir)),
	)
}

// waitForWorkers is the launcher's last init container. It runs as the main
// container does (same image, user, environment and resources), so the
// remote shell it checks is the one mpirun will use, and it adds nothing to
// what the pod requests; of main's privileges it keeps only what that shell
// needs (pod.CopiedSecurity): rsh, a privileged port. files is the volume
// with the hostfile; reach gives the ssh arguments of mpirun's command
// line, which it cannot read.
func waitForWorkers(t *pod.Template, main *pod.Container, shell *yaml.Node, files string, reach sshReach, rsh bool) *yaml.Node {
	c := ynode.Map(
		"name", waitContainer,
		"image", copyOf(main.Get("image")),
		"imagePullPolicy", copyOf(main.Get("imagePullPolicy")),
		"command", []string{"/bin/sh", mpi.ConfigDir + "/" + mpi.WaitForWorkersKey, mpi.PlacedMark},
		"env", copyOf(main.Get("env")),
		"envFrom", copyOf(main.Get("envFrom")),
		"resources", copyOf(main.Get("resources")),
		"securityContext", t.CopiedSecurity(main, rsh),
		"volumeMounts", ynode.Seq(shell, ynode.Map("name", files, "mountPath", mpi.ConfigDir), ynode.Map("name", runVolume, "mountPath", mpi.RunDir)),
	)
	setWaitEnv(pod.ContainerOf(c), reach)
	return c
}

// setWaitEnv gives the container that waits for the workers its bound,
// shown with its default so that it can be patched (a value the
// launcher's environment sets wins), and the ssh arguments of mpirun's
// command line, which the wait cannot read.
func setWaitEnv(c *pod.Container, reach sshReach) {
	c.AddEnv(mpi.WaitTimeoutEnv, mpi.DefaultWaitTimeout)
	if reach.flagSet {
		c.AddEnv(mpi.WaitSSHArgsEnv, reach.flagArgs)
	}
}

// placedTogether tells the launcher's wait for the workers, in whichever
// container it runs, that a gang scheduler places the workers with the
// launcher (gang.Member.PlacedTogether).
func placedTogether(t *pod.Template) func() {
	return func() {
		for _, c := range slices.Concat(t.InitContainers(), t.Containers()) {
			if value, resolved := c.Env(mpi.WaitTimeoutEnv); value != "" || resolved {
				c.AddEnv(mpi.PlacedTogetherEnv, "true")
			}
		}
	}
}

// workerJob runs one pod per worker as an Indexed Job: the Job controller
// gives pod i the hostname <job>-worker-i and makes it again when it
// fails, once the failed pod is gone, so that two pods never share a
// hostname. A pod stopped by a disruption is made again without counting
// against the backoffLimit; one deleted counts. Workers that stop by
// themselves end the Job at the first that succeeds. An elastic job's
// workers are such a Job under Kueue: its completions are the job's
// maximum, the indexes its workers may have, and its parallelism, the
// count, is left to run time, as a StatefulSet's replicas are, so that
// re-applying the output never resets a count changed since.
func workerJob(job *Job) (*yaml.RNode, *pod.Template, []result.Warning, *field.Error) {
	t, warnings, err := workerTemplate(job, "Never", "Indexed Job")
	if p := job.Worker.RestartPolicy; p != "" && p != "Never" {
		warnings = append(warnings, result.Warning{Field: field.NewPath("spec", "mpiReplicaSpecs", "Worker", "restartPolicy"),
			Message: "replaced by Never: the workers' Job makes a failed worker again as a new pod, which its pod failure policy (a disruption does not count against the backoffLimit) needs"})
	}
	n := job.Worker.Replicas
	counts := []any{"completions", n, "parallelism", n}
	if e := job.elastic(); e != nil {
		counts = []any{"completions", e.Max}
	}
	spec := append(append([]any{"completionMode", "Indexed"}, counts...),
		"podReplacementPolicy", "Failed",
		"podFailurePolicy", workload.DisruptionIgnored())
	if job.workersEnd() {
		spec = append(spec, "successPolicy", endsAtFirstSuccess())
	}
	return job.Object("batch/v1", "Job", handoff.WorkersName(job.Name), handoff.RoleLabels(job.Name, handoff.RoleWorker),
		"spec", job.RunPolicy.JobSpec(append(spec, "template", t.Node())...)), t, warnings, err
}

// workerStatefulSet runs an elastic job's workers as a StatefulSet, whose
// pods it names as their hosts, <job>-worker-i, and whose count people,
// scripts and autoscalers change through the scale subresource, the
// highest indexes leaving first.
func workerStatefulSet(job *Job) (*yaml.RNode, *pod.Template, []result.Warning, *field.Error) {
	// A StatefulSet restarts its pods whatever the replica's policy says.
	t, warnings, err := workerTemplate(job, "Always", "StatefulSet")
	return job.StatefulSet(handoff.WorkersName(job.Name), handoff.RoleWorker, nil, t), t, warnings, err
}

// workerTemplate prepares the workers' pod template for the workload that
// runs them, names their hosts, and has them serve what the launch mode's
// mpirun reaches them with: sshd or an rsh server, or, in the KubectlExec
// launch mode, an idle process that mpirun starts processes beside. The
// template's own command, when it has one, runs instead; either runs
// through mpi.Work when the workers are an Indexed Job.
func workerTemplate(job *Job, restartPolicy, workload string) (*pod.Template, []result.Warning, *field.Error) {
	t, warnings := job.podTemplate(job.Worker, handoff.RoleWorker, restartPolicy)
	if hostname := t.Remove("hostname"); hostname != nil {
		warnings = append(warnings, result.Warning{Field: t.Path("hostname"),
			Message: "ignored: the " + workload + " names the host of worker i " + handoff.WorkersName(job.Name) + "-<i>"})
	}
	m := modeOf(job.launchMode())
	main := job.main(t)
	wrapped := job.workersWrapped()
	if main.Get("command") == nil && main.Get("args") == nil {
		main.Set("command", ynode.Of(m.serve))
		if m.serveArgs != nil {
			main.Set("args", ynode.Of(m.serveArgs))
		}
	}
	main.AddEnv("K_MPI_JOB_ROLE", handoff.RoleWorker)
	files := m.workerFiles
	if wrapped {
		if err := workAround(t, main); err != nil {
			return t, warnings, err
		}
		files = append(files, configItem(mpi.WorkKey, 0o555))
	} else if !job.workersInStatefulSet() {
		warnings = append(warnings, result.Warning{Field: main.Path().Child("command"),
			Message: "the workers' container has no command, only its image's entrypoint, which trainfn cannot run its steps around: " +
				"a deleted worker whose process exits 0 is not made again, and the workers do not stop by themselves when the job ends; name the command to have both"})
	}
	if len(files) > 0 {
		if err := t.AddVolume(ynode.Map("name", configVolume, "configMap", ynode.Map(
			"name", handoff.ConfigMapName(job.Name), "items", &yaml.Node{Kind: yaml.SequenceNode, Content: files}))); err != nil {
			return t, warnings, err
		}
		if err := main.AddVolumeMount(configVolume, mpi.ConfigDir); err != nil {
			return t, warnings, err
		}
	}
	if m.mount == nil {
		return t, warnings, nil
	}
	return t, warnings, m.mount(job, t, main)
}

// mountSSH mounts the job's SSH Secret at sshAuthMountPath: the private key
// as id_rsa, the public key as id_rsa.pub and authorized_keys, root's own
// files (sshFileMode).
func mountSSH(job *Job, t *pod.Template, main *pod.Container) *field.Error {
	if err := t.AddVolume(ynode.Map("name", sshVolume, "secret", ynode.Map(
		"secretName", handoff.SSHSecretName(job.Name),
		"defaultMode", ynode.FileMode(sshFileMode(job, t)),
		"items", sshKeyItems()))); err != nil {
		return err
	}
	return main.AddVolumeMount(sshVolume, job.SSHAuthMountPath)
}

// mountLauncherSSH mounts the SSH Secret as mountSSH does, and, when the
// launcher's command runs through mpi.Launch, beside it the ssh client's
// configuration (mpi.SSHConfig) as config: its ssh sessions to a worker
// then share the connection its wait opened, in its scratch directory,
// which only Launch's container mounts.
func mountLauncherSSH(job *Job, t *pod.Template, main *pod.Container) *field.Error {
	if !job.launcherMultiplexes() {
		return mountSSH(job, t, main)
	}
	if err := t.AddVolume(ynode.Map("name", sshVolume, "projected", ynode.Map(
		"defaultMode", ynode.FileMode(sshFileMode(job, t)),
		"sources", ynode.Seq(
			ynode.Map("secret", ynode.Map("name", handoff.SSHSecretName(job.Name), "items", sshKeyItems())),
			ynode.Map("configMap", ynode.Map("name", handoff.ConfigMapName(job.Name), "items", ynode.Seq(
				ynode.Map("key", mpi.SSHConfigKey, "path", "config")))),
		)))); err != nil {
		return err
	}
	return main.AddVolumeMount(sshVolume, job.SSHAuthMountPath)
}

// launcherMultiplexes tells whether the launcher's ssh sessions share a
// connection a worker (mpi.SSHConfig): when they log in over SSH and its
// command runs through mpi.Launch, whose scratch directory keeps the
// connections.
func (j *Job) launcherMultiplexes() bool {
	return j.launchMode() == options.SSH && j.workers() > 0 && hasCommand(j.main(pod.NewTemplate(j.Launcher.Template, j.Launcher.Path)))
}

// sshFileMode is the mode of the files of the SSH volume: readable by root
// alone when the pod runs as root (ssh refuses a private key others can
// read), readable by all otherwise, which ssh and sshd accept for a key
// that another user (root) owns.
func sshFileMode(job *Job, t *pod.Template) int32 {
	root, known := t.RunsAsRoot()
	if !known {
		root = path.Clean(job.SSHAuthMountPath) == "/root/.ssh"
	}
	if root {
		return 0o600
	}
	return 0o644
}

// sshKeyItems are the SSH Secret's keys as ssh and sshd find them.
func sshKeyItems() *yaml.Node {
	return ynode.Seq(
		ynode.Map("key", "ssh-privatekey", "path", "id_rsa"),
		ynode.Map("key", "ssh-publickey", "path", "id_rsa.pub"),
		ynode.Map("key", "ssh-publickey", "path", "authorized_keys"),
	)
}

// main is the container mpirun (or its processes) run in.
func (j *Job) main(t *pod.Template) *pod.Container {
	if c := t.Container(j.MainContainer); j.MainContainer != "" && c != nil {
		return c
	}
	return t.Main()
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
