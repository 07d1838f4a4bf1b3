package mpijob

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
)

func (b *jobBuilder) rsh() *jobBuilder {
	b.job.Options.MPI = options.MPI{LaunchMode: options.Rsh}
	return b
}

func TestRshMode(t *testing.T) {
	r := renderJob(t, newJob("pi").workers(2).rsh().obj())

	// The workers admit the job's own pods, and nothing else: rshd trusts
	// whoever reaches it.
	policy := decodeInto[networkingv1.NetworkPolicy](t, r.find("NetworkPolicy", "pi-rsh"))
	assert.Equal(t, handoff.RoleLabels("pi", handoff.RoleWorker), policy.Spec.PodSelector.MatchLabels)
	assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, policy.Spec.PolicyTypes)
	require.Len(t, policy.Spec.Ingress, 1, "one rule: a rule without sources would admit every peer")
	rule := policy.Spec.Ingress[0]
	require.Len(t, rule.From, 1)
	assert.Equal(t, handoff.JobLabels("pi"), rule.From[0].PodSelector.MatchLabels)
	assert.Nil(t, rule.From[0].NamespaceSelector, "the policy's own namespace")
	assert.Nil(t, rule.From[0].IPBlock)
	assert.Empty(t, rule.Ports, "MPI's processes talk on ports of their choosing")

	worker := r.job("pi-worker").Spec.Template.Spec
	assert.Equal(t, []string{"/bin/sh", "/etc/mpi/work.sh", "/bin/sh", "/etc/mpi/serve_rsh.sh"}, append(worker.Containers[0].Command, worker.Containers[0].Args...))
	assert.Nil(t, volume(worker, "ssh-auth"), "no SSH key in this mode")
	launcher := r.job("pi-launcher").Spec.Template.Spec
	assert.Nil(t, volume(launcher, "ssh-auth"))
	assert.Equal(t, "rsh", envOf(launcher.Containers[0])["OMPI_MCA_plm_rsh_agent"])
	config := r.configMap("pi-config").Data
	assert.Equal(t, mpi.WaitForRsh, config["wait_for_workers.sh"])
	assert.Equal(t, mpi.ServeRsh, config["serve_rsh.sh"])
	assert.Equal(t, "514 stream tcp nowait root /usr/sbin/in.rshd in.rshd\n", config["rshd.conf"])
}

func TestRshModeRefusesWhatItCannotKeepSafe(t *testing.T) {
	for name, tc := range map[string]struct {
		job   *jobBuilder
		field string
	}{
		"host network workers": {
			newJob("pi").workers(2).workerTemplate(`{spec: {hostNetwork: true, containers: [{name: worker, image: app:1}]}}`),
			"spec.mpiReplicaSpecs.Worker.template.spec.hostNetwork"},
		"a host network launcher": {
			newJob("pi").workers(2).launcherTemplate(`{spec: {hostNetwork: true, containers: [{name: launcher, image: app:1}]}}`),
			"spec.mpiReplicaSpecs.Launcher.template.spec.hostNetwork"},
		"non-root workers": {
			newJob("pi").workers(2).workerTemplate(`{spec: {securityContext: {runAsUser: 1000}, containers: [{name: worker, image: app:1}]}}`),
			"spec.mpiReplicaSpecs.Worker.template.spec.securityContext"},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs := checkAndBuild(tc.job.rsh().obj())
			require.Len(t, errs, 1)
			assert.Equal(t, tc.field, errs[0].Field)
		})
	}
}
