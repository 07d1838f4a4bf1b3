package mpi

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/trainfn/trainfn/render/handoff"
)

func TestHostfile(t *testing.T) {
	hosts := []handoff.Host{{Name: "pi-launcher.pi", Slots: 2}, {Name: "pi-worker-0.pi", Slots: 2}}
	tests := []struct {
		impl Implementation
		want string
	}{
		{OpenMPI, "pi-launcher.pi slots=2\npi-worker-0.pi slots=2\n"},
		{Intel, "pi-launcher.pi:2\npi-worker-0.pi:2\n"},
		{MPICH, "pi-launcher.pi:2\npi-worker-0.pi:2\n"},
	}
	for _, tt := range tests {
		t.Run(string(tt.impl), func(t *testing.T) {
			assert.Equal(t, tt.want, Hostfile(tt.impl, hosts))
		})
	}
	assert.Empty(t, Hostfile(OpenMPI, nil))
}

func TestLauncherEnv(t *testing.T) {
	names := func(vars []EnvVar) map[string]string {
		m := map[string]string{}
		for _, v := range vars {
			m[v.Name] = v.Value
		}
		return m
	}
	assert.Equal(t, map[string]string{
		"OMPI_MCA_orte_keep_fqdn_hostnames": "true",
		"OMPI_MCA_orte_default_hostfile":    "/etc/mpi/hostfile",
		"OMPI_MCA_plm_rsh_args":             "-o ConnectionAttempts=10",
		"OMPI_MCA_orte_set_default_slots":   "3",
	}, names(LauncherEnv(OpenMPI, 3, "")))
	assert.Equal(t, map[string]string{
		"I_MPI_HYDRA_HOST_FILE":                 "/etc/mpi/hostfile",
		"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS": "-o ConnectionAttempts=10",
		"I_MPI_PERHOST":                         "3",
	}, names(LauncherEnv(Intel, 3, "")))
	assert.Equal(t, map[string]string{
		"HYDRA_HOST_FILE":           "/etc/mpi/hostfile",
		"HYDRA_LAUNCHER_EXTRA_ARGS": "-o ConnectionAttempts=10",
	}, names(LauncherEnv(MPICH, 3, "")))

	const agent = "/etc/mpi/kubexec.sh"
	assert.Equal(t, map[string]string{
		"OMPI_MCA_orte_keep_fqdn_hostnames": "true",
		"OMPI_MCA_orte_default_hostfile":    "/etc/mpi/hostfile",
		"OMPI_MCA_plm_rsh_agent":            agent,
		"OMPI_MCA_plm_rsh_no_tree_spawn":    "true",
		"OMPI_MCA_orte_set_default_slots":   "3",
	}, names(LauncherEnv(OpenMPI, 3, agent)))
	assert.Equal(t, map[string]string{
		"I_MPI_HYDRA_HOST_FILE":      "/etc/mpi/hostfile",
		"I_MPI_HYDRA_BOOTSTRAP":      "rsh",
		"I_MPI_HYDRA_BOOTSTRAP_EXEC": agent,
		"I_MPI_PERHOST":              "3",
	}, names(LauncherEnv(Intel, 3, agent)))
	assert.Equal(t, map[string]string{
		"HYDRA_HOST_FILE":     "/etc/mpi/hostfile",
		"HYDRA_LAUNCHER":      "rsh",
		"HYDRA_LAUNCHER_EXEC": agent,
	}, names(LauncherEnv(MPICH, 3, agent)))
}
