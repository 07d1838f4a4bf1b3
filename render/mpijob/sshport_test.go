package mpijob

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
)

// waitEnv is the environment of the launcher's container that waits for
// the workers (its main container, which runs launch.sh), and the render's
// warnings.
func waitEnv(t *testing.T, job *Job) (map[string]string, []string) {
	t.Helper()
	out, errs := checkAndBuild(job)
	require.Empty(t, errs)
	r := rendered{t: t, objects: out.Objects}
	launcher := r.job(job.Name + "-launcher")
	var messages []string
	for _, w := range out.Warnings {
		messages = append(messages, w.Field.String()+": "+w.Message)
	}
	spec := launcher.Spec.Template.Spec
	for _, c := range slices.Concat(spec.Containers, spec.InitContainers) {
		if slices.Contains(c.Command, mpi.ConfigDir+"/"+mpi.LaunchKey) || c.Name == waitContainer {
			return envOf(c), messages
		}
	}
	t.Fatal("no container of the launcher waits for the workers")
	return nil, nil
}

// An sshd on another port than 22 (oracle-quickstart/oci-hpc-oke's health
// checks) is found by mpirun through its command line; the wait probes the
// same port, from the variable the render sets.
func TestTheWaitProbesThePortOfMpirunsCommandLine(t *testing.T) {
	for name, launcher := range map[string]string{
		"shell line": `{spec: {containers: [{name: l, image: a, command: [bash, -c], args: ["set -e\nmpirun --allow-run-as-root \\\n  -mca coll ^hcoll -mca plm_rsh_args \"-p 2222\" \\\n  -np $NP /app"]}]}}`,
		"exec form":  `{spec: {containers: [{name: l, image: a, command: [mpirun, --mca, plm_rsh_args, "-p 2222", /app]}]}}`,
		"Open MPI 5": `{spec: {containers: [{name: l, image: a, command: [sh, -c, "mpirun --prtemca plm_ssh_args '-p 2222' /app"]}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			job := newJob("nccl").workers(2).
				workerTemplate(`{spec: {containers: [{name: w, image: a, command: [/bin/bash, -c, "mkdir -p /var/run/sshd; /usr/sbin/sshd -D -p 2222;"]}]}}`).
				launcherTemplate(launcher).obj()
			env, warnings := waitEnv(t, job)
			assert.Equal(t, "-p 2222", env[mpi.WaitSSHArgsEnv])
			assert.Empty(t, warnings)
		})
	}
}

func TestIntelMPIsBootstrapArgsReachTheWait(t *testing.T) {
	job := newJob("pi").implementation(mpi.Intel).workers(1).
		launcherTemplate(`{spec: {containers: [{name: l, image: a, command: [mpirun, -bootstrap-exec-args, "-p 2022", /app]}]}}`).obj()
	env, _ := waitEnv(t, job)
	assert.Equal(t, "-p 2022", env[mpi.WaitSSHArgsEnv])
}

// Workers that listen elsewhere than mpirun is told render with a warning
// that names the variable to set, for each implementation.
func TestWorkersOnAnotherPortWarn(t *testing.T) {
	for impl, variable := range map[mpi.Implementation]string{
		mpi.OpenMPI: "OMPI_MCA_plm_rsh_args", mpi.Intel: "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", mpi.MPICH: "HYDRA_LAUNCHER_EXTRA_ARGS",
	} {
		t.Run(string(impl), func(t *testing.T) {
			job := newJob("pi").implementation(impl).workers(2).
				workerTemplate(`{spec: {containers: [{name: w, image: a, command: [/usr/sbin/sshd, -De, -p, "2222"]}]}}`).obj()
			env, warnings := waitEnv(t, job)
			assert.NotContains(t, env, mpi.WaitSSHArgsEnv)
			require.Len(t, warnings, 1)
			assert.Equal(t, `spec.mpiReplicaSpecs.Worker.template.spec.containers[0].command[0]: the workers' sshd listens on port 2222, but nothing tells the launcher's mpirun, `+
				`which connects to port 22 or the port of its image's ssh_config: unless that says Port 2222, set `+variable+`="-p 2222" in the launcher container's env (Open MPI 5 also reads PRTE_MCA_plm_ssh_args)`,
				warnings[0])
		})
	}
}

// A port the launcher's env gives, literally or from where only the
// kubelet can look, is no cause to warn.
func TestAPortTheLauncherIsGivenDoesNotWarn(t *testing.T) {
	for name, launcher := range map[string]string{
		"Open MPI 5's variable":  `{spec: {containers: [{name: l, image: a, command: [mpirun, /app], env: [{name: PRTE_MCA_plm_ssh_args, value: "-p 2222"}]}]}}`,
		"Open MPI 4's variable":  `{spec: {containers: [{name: l, image: a, command: [mpirun, /app], env: [{name: OMPI_MCA_plm_rsh_args, value: "-o Port=2222"}]}]}}`,
		"from a ConfigMap key":   `{spec: {containers: [{name: l, image: a, command: [mpirun, /app], env: [{name: OMPI_MCA_plm_rsh_args, valueFrom: {configMapKeyRef: {name: c, key: k}}}]}]}}`,
		"from a whole ConfigMap": `{spec: {containers: [{name: l, image: a, command: [mpirun, /app], envFrom: [{configMapRef: {name: c}}]}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			job := newJob("pi").workers(1).launcherTemplate(launcher).
				workerTemplate(`{spec: {containers: [{name: w, image: a, command: [sh, -c, "exec /usr/sbin/sshd -D -p2222"]}]}}`).obj()
			_, warnings := waitEnv(t, job)
			assert.Empty(t, warnings)
		})
	}
}

// What only the launcher's script knows the wait cannot see: the render
// says which variable to set where the wait reads it.
func TestSSHArgumentsOnlyAScriptKnowsWarn(t *testing.T) {
	for name, tt := range map[string]struct{ launcher, warning string }{
		"exported": {`{spec: {containers: [{name: l, image: a, command: [bash, -c, "export PRTE_MCA_plm_ssh_args='-p 2222'; mpirun /app"]}]}}`,
			"spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command[2]: the launcher's script sets PRTE_MCA_plm_ssh_args, which the launcher's wait for the workers " +
				"(an init container, which does not run the script) cannot see: set it in the container's env instead"},
		"a variable on the command line": {`{spec: {containers: [{name: l, image: a, command: [bash, -c, "mpirun -mca plm_rsh_args \"-p $PORT\" /app"]}]}}`,
			`spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command[2]: mpirun's ssh arguments (-mca plm_rsh_args "-p $PORT") are only known when the script runs, ` +
				"so the launcher's wait for the workers cannot use them: set OMPI_MCA_plm_rsh_args in the launcher container's env instead"},
	} {
		t.Run(name, func(t *testing.T) {
			job := newJob("pi").workers(1).launcherTemplate(tt.launcher).
				workerTemplate(`{spec: {containers: [{name: w, image: a, command: [/usr/sbin/sshd, -D, -p, "2222"]}]}}`).obj()
			env, warnings := waitEnv(t, job)
			assert.NotContains(t, env, mpi.WaitSSHArgsEnv)
			assert.Equal(t, []string{tt.warning}, warnings)
		})
	}
}

// mpi-operator v2's discover_hosts.sh prints no slots, and horovodrun then
// needs --slots-per-host; training-operator's v1 printed them.
func TestHorovodrunWithoutSlotsPerHostWarnsForV2(t *testing.T) {
	const launcher = `{spec: {containers: [{name: l, image: a, command: [horovodrun, -np, "2", --host-discovery-script, /etc/mpi/discover_hosts.sh, python, train.py]}]}}`
	job := newJob("h").slots(4).workers(2).launcherTemplate(launcher).obj()
	job.DiscoverFormat = handoff.HostOnly
	job.Options.ElasticWorkers = &handoff.Bounds{Min: 1, Max: 3}
	_, warnings := waitEnv(t, job)
	assert.Contains(t, warnings, "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command[0]: discover_hosts.sh prints one host per line without its slots, "+
		"as mpi-operator v2's does, and horovodrun then needs them from --slots-per-host: add --slots-per-host 4 to horovodrun "+
		"(training-operator's kubeflow.org/v1 MPIJob printed host:slots)")

	job.DiscoverFormat = handoff.HostSlots
	_, warnings = waitEnv(t, job)
	assert.Empty(t, warnings)
}
