package mpijob

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
)

// jobBuilder builds the renderer's input the way a test reads best.
type jobBuilder struct{ job Job }

func newJob(name string) *jobBuilder {
	return &jobBuilder{job: Job{
		Owner:            workload.Owner{Name: name},
		Implementation:   mpi.OpenMPI,
		SlotsPerWorker:   1,
		SSHAuthMountPath: "/root/.ssh",
		Launcher:         replica(1, "OnFailure", "Launcher", `{spec: {containers: [{name: launcher, image: app:1, command: [mpirun]}]}}`),
		RunPolicy:        workload.RunPolicy{CleanPodPolicy: "None"},
	}}
}

func replica(n int32, restart, role, template string) workload.Replica {
	return workload.Replica{Replicas: n, RestartPolicy: restart, Template: yaml.MustParse(template),
		Path: field.NewPath("spec", "mpiReplicaSpecs", role, "template")}
}

func (b *jobBuilder) implementation(i mpi.Implementation) *jobBuilder {
	b.job.Implementation = i
	return b
}

func (b *jobBuilder) slots(n int32) *jobBuilder {
	b.job.SlotsPerWorker = n
	return b
}

func (b *jobBuilder) launcherWorks() *jobBuilder {
	b.job.RunLauncherAsWorker = true
	return b
}

func (b *jobBuilder) workers(n int32) *jobBuilder {
	r := replica(n, "Never", "Worker", `{spec: {containers: [{name: worker, image: app:1}]}}`)
	b.job.Worker = &r
	return b
}

func (b *jobBuilder) workerTemplate(template string) *jobBuilder {
	b.job.Worker.Template = yaml.MustParse(template)
	return b
}

func (b *jobBuilder) launcherTemplate(template string) *jobBuilder {
	b.job.Launcher.Template = yaml.MustParse(template)
	return b
}

func (b *jobBuilder) sshPath(p string) *jobBuilder {
	b.job.SSHAuthMountPath = p
	return b
}

func (b *jobBuilder) runPolicy(p workload.RunPolicy) *jobBuilder {
	b.job.RunPolicy = p
	return b
}

func (b *jobBuilder) obj() *Job { return &b.job }

// rendered is a render's output, read back into Kubernetes' own types.
type rendered struct {
	t       *testing.T
	objects []*yaml.RNode
}

// checkAndBuild checks and builds a job as the pipeline does, without the passes
// every kind shares.
func checkAndBuild(job *Job) (result.Output, field.ErrorList) {
	if errs := job.Check(); len(errs) > 0 {
		return result.Output{}, errs
	}
	out, _, errs := job.Build()
	return out, errs
}

func renderJob(t *testing.T, job *Job) rendered {
	t.Helper()
	r, _ := renderWarnings(t, job)
	return r
}

// renderWarnings renders a job, and its warnings as "field: message".
func renderWarnings(t *testing.T, job *Job) (rendered, []string) {
	t.Helper()
	out, errs := checkAndBuild(job)
	require.Empty(t, errs)
	var warnings []string
	for _, w := range out.Warnings {
		warnings = append(warnings, w.Field.String()+": "+w.Message)
	}
	return rendered{t: t, objects: out.Objects}, warnings
}

func (r rendered) find(kind, name string) *yaml.RNode {
	for _, o := range r.objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func decodeInto[T any](t *testing.T, n *yaml.RNode) *T {
	t.Helper()
	require.NotNil(t, n)
	b, err := n.MarshalJSON()
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(b, &out))
	return &out
}

func (r rendered) job(name string) *batchv1.Job {
	return decodeInto[batchv1.Job](r.t, r.find("Job", name))
}

func (r rendered) configMap(name string) *corev1.ConfigMap {
	return decodeInto[corev1.ConfigMap](r.t, r.find("ConfigMap", name))
}

func envOf(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

func volume(spec corev1.PodSpec, name string) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

func TestHostfiles(t *testing.T) {
	lines := map[mpi.Implementation]string{mpi.OpenMPI: "%s slots=%d\n", mpi.Intel: "%s:%d\n", mpi.MPICH: "%s:%d\n"}
	for _, impl := range []mpi.Implementation{mpi.OpenMPI, mpi.Intel, mpi.MPICH} {
		for _, slots := range []int32{1, 8} {
			for _, launcherWorks := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/slots=%d/runLauncherAsWorker=%v", impl, slots, launcherWorks), func(t *testing.T) {
					b := newJob("pi").implementation(impl).slots(slots).workers(3)
					var hosts []string
					if launcherWorks {
						b.launcherWorks()
						hosts = append(hosts, "pi-launcher.pi")
					}
					hosts = append(hosts, "pi-worker-0.pi", "pi-worker-1.pi", "pi-worker-2.pi")
					var hostfile, discover string
					for _, h := range hosts {
						hostfile += fmt.Sprintf(lines[impl], h, slots)
						discover += fmt.Sprintf("echo %s:%d\n", h, slots)
					}

					cm := renderJob(t, b.obj()).configMap("pi-config")
					assert.Equal(t, hostfile, cm.Data["hostfile"])
					assert.Equal(t, "#!/bin/sh\n"+discover, cm.Data["discover_hosts.sh"])
				})
			}
		}
	}
}

func TestLauncherJob(t *testing.T) {
	for _, launcherWorks := range []bool{false, true} {
		t.Run(fmt.Sprintf("runLauncherAsWorker=%v", launcherWorks), func(t *testing.T) {
			b := newJob("pi").implementation(mpi.Intel).slots(2).workers(2)
			if launcherWorks {
				b.launcherWorks()
			}
			r := renderJob(t, b.obj())
			spec := r.job("pi-launcher").Spec.Template.Spec

			assert.Equal(t, "pi-launcher", spec.Hostname)
			assert.Equal(t, "pi", spec.Subdomain)
			assert.Equal(t, corev1.RestartPolicyOnFailure, spec.RestartPolicy)

			env := envOf(spec.Containers[0])
			assert.Equal(t, "launcher", env["K_MPI_JOB_ROLE"])
			assert.Equal(t, "/etc/mpi/hostfile", env["I_MPI_HYDRA_HOST_FILE"])
			assert.Equal(t, "2", env["I_MPI_PERHOST"])
			_, gpusHidden := env["NVIDIA_VISIBLE_DEVICES"]
			assert.Equal(t, !launcherWorks, gpusHidden, "a launcher that does no work is kept off the GPUs")

			// The wait runs in the launcher's own container, before mpirun
			// at every attempt: no init container.
			assert.Empty(t, spec.InitContainers)
			assert.Equal(t, []string{"/bin/sh", "/etc/mpi/launch.sh"}, spec.Containers[0].Command)
			assert.Equal(t, []string{"mpirun"}, spec.Containers[0].Args, "the launcher's command runs as launch.sh's arguments")
			assert.Contains(t, spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: runVolume, MountPath: mpi.RunDir},
				"the wait records there, for the attempts after it, that the workers were placed")
			require.NotNil(t, volume(spec, runVolume))
			assert.NotNil(t, volume(spec, runVolume).EmptyDir, "it outlives the container's restarts, not the pod")
			assert.Equal(t, "600", env[mpi.WaitTimeoutEnv])
			assert.Equal(t, "5", env[mpi.FailuresAllowedEnv], "a Job's default backoffLimit of 6 restarts of its container (OnFailure) allows 5 failed attempts")
			assert.Equal(t, "false", env[mpi.WorkersEndEnv], "cleanPodPolicy None: the workers run on")

			config := volume(spec, "mpi-job-config")
			require.NotNil(t, config)
			assert.Equal(t, "pi-config", config.ConfigMap.Name)
			assert.Contains(t, config.ConfigMap.Items, corev1.KeyToPath{Key: mpi.LaunchKey, Path: mpi.LaunchKey, Mode: ptr.To[int32](0o555)})
			assert.Equal(t, mpi.LaunchOverSSH(mpi.Intel), r.configMap("pi-config").Data[mpi.LaunchKey])
			assert.Contains(t, spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "mpi-job-config", MountPath: "/etc/mpi"})
			assert.Contains(t, spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "ssh-auth", MountPath: "/root/.ssh"})

			// Hydra's proxies dial the launcher back by its short name.
			assert.NotNil(t, r.find("Service", "pi-launcher"))
		})
	}
}

func TestLauncherServiceOnlyForHydra(t *testing.T) {
	for impl, want := range map[mpi.Implementation]bool{mpi.OpenMPI: false, mpi.Intel: true, mpi.MPICH: true} {
		r := renderJob(t, newJob("pi").implementation(impl).workers(1).obj())
		assert.Equal(t, want, r.find("Service", "pi-launcher") != nil, impl)
		assert.NotNil(t, r.find("Service", "pi"), impl)
	}
}

func TestWorkerJob(t *testing.T) {
	for _, policy := range []string{"None", "Running", "All"} {
		t.Run(policy, func(t *testing.T) {
			r := renderJob(t, newJob("pi").workers(3).runPolicy(workload.RunPolicy{CleanPodPolicy: policy}).obj())
			workers := r.job("pi-worker")
			assert.Equal(t, ptr.To(batchv1.IndexedCompletion), workers.Spec.CompletionMode)
			assert.Equal(t, ptr.To[int32](3), workers.Spec.Completions)
			assert.Equal(t, ptr.To[int32](3), workers.Spec.Parallelism)
			assert.Equal(t, ptr.To(batchv1.Failed), workers.Spec.PodReplacementPolicy, "two pods never share a hostname")
			require.NotNil(t, workers.Spec.PodFailurePolicy)
			assert.Equal(t, []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}}}},
				workers.Spec.PodFailurePolicy.Rules, "an evicted worker is made again, and costs no retry")
			if policy == "None" {
				assert.Nil(t, workers.Spec.SuccessPolicy, "the workers run on after the job")
			} else {
				assert.Equal(t, &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}},
					workers.Spec.SuccessPolicy, "the first worker the launcher ends ends them all")
			}

			spec := workers.Spec.Template.Spec
			assert.Equal(t, "pi", spec.Subdomain, "with the Indexed Job's hostname, pod i is pi-worker-i.pi")
			assert.Equal(t, corev1.RestartPolicyNever, spec.RestartPolicy)
			assert.Equal(t, []string{"/bin/sh", "/etc/mpi/work.sh"}, spec.Containers[0].Command)
			assert.Equal(t, []string{"/usr/sbin/sshd", "-De"}, spec.Containers[0].Args, "sshd runs under work.sh")
			assert.Equal(t, "worker", envOf(spec.Containers[0])["K_MPI_JOB_ROLE"])
			assert.Empty(t, spec.InitContainers)
			assert.Equal(t, "pi-ssh", volume(spec, "ssh-auth").Secret.SecretName)
			assert.Equal(t, []corev1.KeyToPath{{Key: mpi.WorkKey, Path: mpi.WorkKey, Mode: ptr.To[int32](0o555)}}, volume(spec, "mpi-job-config").ConfigMap.Items)
			assert.Contains(t, spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: runVolume, MountPath: mpi.RunDir})
			assert.Equal(t, mpi.Work, r.configMap("pi-config").Data[mpi.WorkKey])

			service := decodeInto[corev1.Service](t, r.find("Service", "pi"))
			assert.Equal(t, corev1.ClusterIPNone, service.Spec.ClusterIP)
			assert.True(t, service.Spec.PublishNotReadyAddresses, "a worker resolves as soon as it has an address")
			for k, v := range service.Spec.Selector {
				assert.Equal(t, v, workers.Spec.Template.Labels[k], "the Service selects the workers")
			}
		})
	}
}

// A worker container that names only arguments runs its image's
// entrypoint, which nothing can run around: the render says what is lost.
func TestWorkerCommandKept(t *testing.T) {
	for template, wrapped := range map[string]bool{
		`{spec: {containers: [{name: w, image: i, command: [/usr/sbin/sshd, -D, -p, "2222"]}]}}`: true,
		`{spec: {containers: [{name: w, image: i, args: [-D]}]}}`:                                false,
	} {
		r, warnings := renderWarnings(t, newJob("pi").workers(1).workerTemplate(template).runPolicy(workload.RunPolicy{CleanPodPolicy: "Running"}).obj())
		workers := r.job("pi-worker")
		c := workers.Spec.Template.Spec.Containers[0]
		assert.NotContains(t, c.Args, "-De", template)
		if wrapped {
			assert.Equal(t, []string{"/bin/sh", "/etc/mpi/work.sh", "/usr/sbin/sshd", "-D", "-p", "2222"}, append(c.Command, c.Args...))
			assert.NotNil(t, workers.Spec.SuccessPolicy)
			continue
		}
		assert.Nil(t, c.Command, template)
		assert.Nil(t, workers.Spec.SuccessPolicy, "a worker that is not told cannot end the Job")
		assert.Contains(t, strings.Join(warnings, "\n"), "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].command: the workers' container has no command")
		assert.Contains(t, strings.Join(warnings, "\n"), "carried out at run time by trainfn's reconciler", "the reconciler stops them")
	}
}

// A launcher container without a command waits for the workers in an init
// container, and says what that costs.
func TestLauncherWithoutACommand(t *testing.T) {
	r, warnings := renderWarnings(t, newJob("pi").workers(1).launcherTemplate(`{spec: {containers: [{name: l, image: i, args: [mpirun]}]}}`).obj())
	spec := r.job("pi-launcher").Spec.Template.Spec
	require.Len(t, spec.InitContainers, 1)
	assert.Equal(t, "wait-for-workers", spec.InitContainers[0].Name)
	assert.Equal(t, []string{"/bin/sh", "/etc/mpi/wait_for_workers.sh", mpi.PlacedMark}, spec.InitContainers[0].Command)
	assert.Contains(t, spec.InitContainers[0].VolumeMounts, corev1.VolumeMount{Name: runVolume, MountPath: mpi.RunDir},
		"a retried wait, the init container restarted, knows the workers were placed")
	assert.NotNil(t, volume(spec, runVolume))
	assert.Equal(t, "/etc/mpi/hostfile", envOf(spec.InitContainers[0])["OMPI_MCA_orte_default_hostfile"], "the wait sees the ssh arguments mpirun gets")
	assert.Nil(t, spec.Containers[0].Command)
	assert.Contains(t, strings.Join(warnings, "\n"), "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command: the launcher's container has no command")
}

// A launcher of restartPolicy Never is a new pod at each attempt; one
// evicted costs no attempt.
func TestLauncherEvictionCostsNoAttempt(t *testing.T) {
	b := newJob("pi").workers(1)
	b.job.Launcher.RestartPolicy = "Never"
	launcher := renderJob(t, b.obj()).job("pi-launcher")
	assert.Equal(t, "6", envOf(launcher.Spec.Template.Spec.Containers[0])[mpi.FailuresAllowedEnv], "a Job fails past backoffLimit failed pods")
	require.NotNil(t, launcher.Spec.PodFailurePolicy)
	assert.Equal(t, corev1.DisruptionTarget, launcher.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Type)
	// A new pod would wait for workers gone as for room: the wait's word
	// that they are gone fails the Job, from where the wait runs.
	gone := func(j *batchv1.Job) batchv1.PodFailurePolicyRule {
		require.Len(t, j.Spec.PodFailurePolicy.Rules, 2)
		return j.Spec.PodFailurePolicy.Rules[1]
	}
	assert.Equal(t, batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
		ContainerName: ptr.To("launcher"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{mpi.WorkersGoneExitCode}}}, gone(launcher),
		"launch.sh runs the wait in the launcher's container")
	b = newJob("pi").workers(1).launcherTemplate(`{spec: {containers: [{name: mpi, image: i}]}}`)
	b.job.Launcher.RestartPolicy = "Never"
	entrypoint := renderJob(t, b.obj()).job("pi-launcher")
	assert.Equal(t, waitContainer, *gone(entrypoint).OnExitCodes.ContainerName, "a launcher with no command waits in an init container")

	onFailure := renderJob(t, newJob("pi").workers(1).obj()).job("pi-launcher")
	assert.Nil(t, onFailure.Spec.PodFailurePolicy, "Kubernetes takes a podFailurePolicy with restartPolicy Never alone")
}

func TestSSHKeyModes(t *testing.T) {
	const rootOnly, everyone = 0o600, 0o644
	tests := []struct {
		name, path, launcher string
		want                 int32
	}{
		{"root's home, user unknown", "/root/.ssh", `{spec: {containers: [{name: l, image: i}]}}`, rootOnly},
		{"root's home written with a slash", "/root/.ssh/", `{spec: {containers: [{name: l, image: i}]}}`, rootOnly},
		{"other home, user unknown", "/home/mpi/.ssh", `{spec: {containers: [{name: l, image: i}]}}`, everyone},
		{"container runs as root", "/home/mpi/.ssh", `{spec: {containers: [{name: l, image: i, securityContext: {runAsUser: 0}}]}}`, rootOnly},
		{"container runs as a user", "/root/.ssh", `{spec: {containers: [{name: l, image: i, securityContext: {runAsUser: 1000}}]}}`, everyone},
		{"pod runs as a user", "/root/.ssh", `{spec: {securityContext: {runAsUser: 1000}, containers: [{name: l, image: i}]}}`, everyone},
		{"container overrides the pod", "/root/.ssh", `{spec: {securityContext: {runAsUser: 1000}, containers: [{name: l, image: i, securityContext: {runAsUser: 0}}]}}`, rootOnly},
		{"non-root required", "/root/.ssh", `{spec: {containers: [{name: l, image: i, securityContext: {runAsNonRoot: true}}]}}`, everyone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := renderJob(t, newJob("pi").workers(1).sshPath(tt.path).launcherTemplate(tt.launcher).obj())
			spec := r.job("pi-launcher").Spec.Template.Spec
			assert.Equal(t, ptr.To(tt.want), volume(spec, "ssh-auth").Secret.DefaultMode)
			assert.Contains(t, spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "ssh-auth", MountPath: tt.path})
		})
	}
}

func TestRunPolicyOnBothJobs(t *testing.T) {
	policy := workload.RunPolicy{
		BackoffLimit:            ptr.To[int32](2),
		ActiveDeadlineSeconds:   ptr.To[int64](3600),
		TTLSecondsAfterFinished: ptr.To[int32](60),
		Suspend:                 true,
		ManagedBy:               "kueue.x-k8s.io/multikueue",
	}
	r := renderJob(t, newJob("pi").workers(2).runPolicy(policy).obj())
	for _, name := range []string{"pi-launcher", "pi-worker"} {
		spec := r.job(name).Spec
		assert.Equal(t, policy.BackoffLimit, spec.BackoffLimit, name)
		assert.Equal(t, policy.ActiveDeadlineSeconds, spec.ActiveDeadlineSeconds, name)
		assert.Equal(t, policy.TTLSecondsAfterFinished, spec.TTLSecondsAfterFinished, name)
		assert.Equal(t, ptr.To(true), spec.Suspend, name)
		assert.Equal(t, ptr.To("kueue.x-k8s.io/multikueue"), spec.ManagedBy, name)
	}

	defaults := renderJob(t, newJob("pi").workers(2).obj()).job("pi-launcher").Spec
	assert.Nil(t, defaults.Suspend, "an unsuspended job leaves the field to Kubernetes")
	assert.Nil(t, defaults.ManagedBy, "Kubernetes' own Job controller runs the Jobs")
}

func TestLauncherAlone(t *testing.T) {
	r := renderJob(t, newJob("solo").slots(4).launcherWorks().obj())
	assert.Nil(t, r.find("Job", "solo-worker"))
	spec := r.job("solo-launcher").Spec.Template.Spec
	assert.Empty(t, spec.InitContainers, "nothing to wait for")
	assert.Nil(t, volume(spec, "ssh-auth"), "no remote host, no SSH")
	assert.Equal(t, "solo-launcher.solo slots=4\n", r.configMap("solo-config").Data["hostfile"])
}

func TestReservedNames(t *testing.T) {
	tests := map[string]string{
		"spec.mpiReplicaSpecs.Launcher.template.spec.volumes[0].name":                         `{spec: {containers: [{name: l, image: i}], volumes: [{name: mpi-job-config, emptyDir: {}}]}}`,
		"spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].volumeMounts[0].mountPath": `{spec: {containers: [{name: l, image: i, volumeMounts: [{name: v, mountPath: /root/.ssh}]}]}}`,
		"spec.mpiReplicaSpecs.Launcher.template.spec.containers[1].name":                      `{spec: {containers: [{name: l, image: i}, {name: wait-for-workers, image: i}]}}`,
	}
	for path, template := range tests {
		_, errs := checkAndBuild(newJob("pi").workers(1).launcherTemplate(template).obj())
		require.Len(t, errs, 1, path)
		assert.Equal(t, field.ErrorTypeDuplicate, errs[0].Type)
		assert.Equal(t, path, errs[0].Field)
	}
}

func TestUserEnvWins(t *testing.T) {
	r := renderJob(t, newJob("pi").workers(1).launcherTemplate(
		`{spec: {containers: [{name: l, image: i, env: [{name: OMPI_MCA_plm_rsh_args, value: "-p 2222"}]}]}}`).obj())
	c := r.job("pi-launcher").Spec.Template.Spec.Containers[0]
	var values []string
	for _, e := range c.Env {
		if e.Name == "OMPI_MCA_plm_rsh_args" {
			values = append(values, e.Value)
		}
	}
	assert.Equal(t, []string{"-p 2222"}, values)
}

func (b *jobBuilder) kubectlExec(deliveryImage string) *jobBuilder {
	b.job.Options.MPI = options.MPI{LaunchMode: options.KubectlExec, KubectlDeliveryImage: deliveryImage}
	return b
}

func TestKubectlExecMode(t *testing.T) {
	r := renderJob(t, newJob("pi").workers(2).kubectlExec("delivery:1").obj())
	assert.Nil(t, r.find("StatefulSet", "pi-worker"), "a static job's workers are an Indexed Job, which stops when the job ends")
	workers := r.job("pi-worker")
	assert.Equal(t, ptr.To(batchv1.IndexedCompletion), workers.Spec.CompletionMode)
	worker := workers.Spec.Template.Spec
	assert.Equal(t, []string{"/bin/sh", "/etc/mpi/work.sh", "sleep", "365d"}, append(worker.Containers[0].Command, worker.Containers[0].Args...))
	assert.Nil(t, volume(worker, "ssh-auth"), "no SSH in this mode")
	assert.Equal(t, []string{mpi.KubexecKey, mpi.WorkKey}, keys(volume(worker, "mpi-job-config").ConfigMap.Items))

	// The Job controller names the pods: the Role cannot, and finds them.
	role := decodeInto[rbacv1.Role](t, r.find("Role", "pi-launcher"))
	assert.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create", "get"}},
	}, role.Rules)
	assert.Equal(t, map[string]string{handoff.ExecPods: handoff.IndexedPodNames(2, "pi-worker")}, role.Annotations,
		"what the workers' pods' names are, for the admission policy that holds the launcher to them")
	binding := decodeInto[rbacv1.RoleBinding](t, r.find("RoleBinding", "pi-launcher"))
	assert.Equal(t, "pi-launcher", binding.Subjects[0].Name)
	assert.Empty(t, binding.Subjects[0].Namespace, "RBAC reads it as the binding's own: the output stays portable")

	launcher := r.job("pi-launcher").Spec.Template.Spec
	assert.Equal(t, "pi-launcher", launcher.ServiceAccountName)
	env := envOf(launcher.Containers[0])
	assert.Equal(t, "/etc/mpi/kubexec.sh", env["OMPI_MCA_plm_rsh_agent"])
	assert.NotContains(t, env, "OMPI_MCA_plm_rsh_args", "the agent takes no ssh arguments")
	require.Len(t, launcher.InitContainers, 1)
	assert.Equal(t, "kubectl-delivery", launcher.InitContainers[0].Name)
	assert.Equal(t, "delivery:1", launcher.InitContainers[0].Image)
	assert.Equal(t, &corev1.SecurityContext{
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		RunAsUser:                ptr.To[int64](65534),
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}, launcher.InitContainers[0].SecurityContext, "the delivery image's root is not needed to copy a file")
	assert.Nil(t, volume(launcher, "ssh-auth"))

	config := r.configMap("pi-config").Data
	assert.Equal(t, mpi.Kubexec("worker", "pi-worker"), config["kubexec.sh"])
	assert.Equal(t, mpi.WaitForExec, config["wait_for_workers.sh"])
	assert.Equal(t, mpi.LaunchOverKubectlExec, config[mpi.LaunchKey])
	assert.NotContains(t, config["wait_for_workers.sh"], "ssh ")
}

// An elastic job's workers are a StatefulSet, whose pods' names its Role
// lists.
func TestKubectlExecElasticRole(t *testing.T) {
	b := newJob("pi").workers(2).kubectlExec("")
	b.job.Options.ElasticWorkers = &handoff.Bounds{Min: 1, Max: 3}
	r := renderJob(t, b.obj())
	assert.NotNil(t, r.find("StatefulSet", "pi-worker"))
	role := decodeInto[rbacv1.Role](t, r.find("Role", "pi-launcher"))
	for _, rule := range role.Rules {
		assert.Equal(t, []string{"pi-worker-0", "pi-worker-1", "pi-worker-2"}, rule.ResourceNames, "only this job's workers")
		assert.NotContains(t, rule.Verbs, "list")
	}
	assert.Empty(t, role.Annotations, "RBAC alone holds the launcher to its workers")
	config := r.configMap("pi-config").Data
	assert.Equal(t, mpi.Kubexec("worker", ""), config["kubexec.sh"], "a StatefulSet's pod is named as its host")
	for key, script := range config {
		assert.NotContains(t, script, "get pods", "%s: the Role lets the launcher list no pod", key)
	}
}

// Under Kueue an elastic job's workers are an Indexed Job of as many
// indexes as the job may have workers: its Role reaches the namespace's
// pods, and says what every worker's pod's name is.
func TestKubectlExecElasticUnderKueueRole(t *testing.T) {
	b := newJob("pi").workers(2).kubectlExec("")
	b.job.Options.ElasticWorkers = &handoff.Bounds{Min: 1, Max: 3}
	b.job.Options.Gang.Scheduler = options.Kueue
	r := renderJob(t, b.obj())
	assert.Nil(t, r.find("StatefulSet", "pi-worker"))
	role := decodeInto[rbacv1.Role](t, r.find("Role", "pi-launcher"))
	assert.Equal(t, map[string]string{handoff.ExecPods: handoff.IndexedPodNames(3, "pi-worker")}, role.Annotations)
	assert.Contains(t, role.Rules[0].Verbs, "list", "kubexec.sh finds an Indexed Job's pod by its labels")
}

// A long name the Job controller cuts short in its pods' names: the
// expression matches what is left of it.
func TestKubectlExecPodsOfALongName(t *testing.T) {
	name := strings.Repeat("a", 50)
	r := renderJob(t, newJob(name).workers(2).kubectlExec("").obj())
	role := decodeInto[rbacv1.Role](t, r.find("Role", name+"-launcher"))
	pods := regexp.MustCompile(role.Annotations[handoff.ExecPods])
	assert.Regexp(t, pods, name+"-work-1-x7k2p", "the Job controller names worker 1's pod "+name+"-work-1-<random>")
	assert.NotRegexp(t, pods, name+"-launcher-x7k2p")
}

func keys(items []corev1.KeyToPath) []string {
	var k []string
	for _, i := range items {
		k = append(k, i.Key)
	}
	return k
}

func TestKubectlFromTheLauncherImage(t *testing.T) {
	r := renderJob(t, newJob("pi").workers(1).kubectlExec("").obj())
	launcher := r.job("pi-launcher").Spec.Template.Spec
	assert.Empty(t, launcher.InitContainers, "the launcher's own kubectl, and the wait in its container")
}

func TestKubectlExecRoleBounded(t *testing.T) {
	b := newJob("pi").workers(2).kubectlExec("d")
	b.job.Options.ElasticWorkers = &handoff.Bounds{Min: 1, Max: 20000}
	_, errs := checkAndBuild(b.obj())
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.mpiReplicaSpecs.Worker.replicas", errs[0].Field)
	assert.Contains(t, errs[0].Detail, "use the SSH launch mode")
}
