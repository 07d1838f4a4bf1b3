package mpi

import "slices"

// SSHArgsVars are the variables an implementation's mpirun reads extra ssh
// arguments from ("-p 2222"), the one it prefers first:
//   - Open MPI 5 launches through PRRTE's ssh component, whose parameter is
//     plm_ssh_args (PRTE_MCA_plm_ssh_args); from 5.0.1 it also takes Open
//     MPI 4's plm_rsh_args, which it translates (openpmix/prrte#1850), and
//     the issue that asked for it names PRTE_MCA_plm_rsh_args too;
//   - Open MPI 4 reads plm_rsh_args alone (OMPI_MCA_plm_rsh_args);
//   - Intel MPI's Hydra reads I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS;
//   - MPICH's Hydra reads HYDRA_LAUNCHER_EXTRA_ARGS (mpi-operator sets
//     HYDRA_LAUNCH_EXTRA_ARGS, which Hydra never reads).
func SSHArgsVars(impl Implementation) []string {
	switch impl {
	case Intel:
		return []string{"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"}
	case MPICH:
		return []string{"HYDRA_LAUNCHER_EXTRA_ARGS"}
	default:
		return []string{"PRTE_MCA_plm_ssh_args", "PRTE_MCA_plm_rsh_args", "OMPI_MCA_plm_rsh_args"}
	}
}

// AllSSHArgsVars are SSHArgsVars of every implementation.
func AllSSHArgsVars() []string {
	return slices.Concat(SSHArgsVars(OpenMPI), SSHArgsVars(Intel), SSHArgsVars(MPICH))
}

// SSHArgsVar is the variable a user sets for an implementation's ssh
// arguments: the one every version of it reads (for Open MPI, 4 and 5 both
// read OMPI_MCA_plm_rsh_args, 5.0.0 aside).
func SSHArgsVar(impl Implementation) string {
	vars := SSHArgsVars(impl)
	return vars[len(vars)-1]
}

// WaitSSHArgsEnv carries the ssh arguments mpirun's command line gives
// (-mca plm_rsh_args "-p 2222"), which win over the environment's, to the
// launcher's wait: the render finds them, as the wait runs no mpirun.
const WaitSSHArgsEnv = "TRAINFN_WAIT_SSH_ARGS"

// SSHArgsFlag finds the ssh arguments an mpirun command line gives: the
// value after Open MPI's -mca (--mca, --prtemca) plm_rsh_args or
// plm_ssh_args, or after Hydra's -bootstrap-exec-args. at is the index of
// the value in words; -1 when there is none.
func SSHArgsFlag(words []string) (at int) {
	for i := 0; i+1 < len(words); i++ {
		switch words[i] {
		case "-mca", "--mca", "-prtemca", "--prtemca", "-gmca", "--gmca":
			if i+2 < len(words) && (words[i+1] == "plm_rsh_args" || words[i+1] == "plm_ssh_args") {
				return i + 2
			}
		case "-bootstrap-exec-args", "--bootstrap-exec-args":
			return i + 1
		}
	}
	return -1
}
