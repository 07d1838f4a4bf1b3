// Package mpi knows what each MPI implementation needs from the files and the
// environment a launcher gets: the hostfile format, the variables that point
// mpirun at it, and the scripts that run beside it. It knows nothing of job
// APIs, so every MPIJob generation shares it.
package mpi

import (
	"fmt"
	"strconv"
	"strings"
)

// Implementation is an MPI implementation, named as MPIJob's
// spec.mpiImplementation names it.
type Implementation string

const (
	OpenMPI Implementation = "OpenMPI"
	Intel   Implementation = "Intel"
	MPICH   Implementation = "MPICH"
)

// ConfigDir is where the launcher mounts the job's ConfigMap.
const ConfigDir = "/etc/mpi"

// Keys of the job's ConfigMap, which are also file names under ConfigDir.
const (
	HostfileKey       = "hostfile"
	DiscoverHostsKey  = "discover_hosts.sh"
	WaitForWorkersKey = "wait_for_workers.sh"
)

// Host is one line of a hostfile.
type Host struct {
	Name  string
	Slots int32
}

// Hostfile writes hosts in the implementation's hostfile format: OpenMPI's
// "host slots=N", or Hydra's "host:N" for Intel MPI and MPICH.
func Hostfile(impl Implementation, hosts []Host) string {
	var b strings.Builder
	for _, h := range hosts {
		b.WriteString(h.Name)
		if impl == OpenMPI {
			b.WriteString(" slots=")
		} else {
			b.WriteString(":")
		}
		b.WriteString(strconv.FormatInt(int64(h.Slots), 10))
		b.WriteString("\n")
	}
	return b.String()
}

// DiscoverHosts writes Horovod's host discovery script
// (--host-discovery-script): one "host:slots" line per host that can take
// work. Rendered, it lists every host; at run time the reconciler keeps it to
// the hosts that are up.
func DiscoverHosts(hosts []Host) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, h := range hosts {
		fmt.Fprintf(&b, "echo %s:%d\n", h.Name, h.Slots)
	}
	return b.String()
}

// EnvVar is a container environment variable.
type EnvVar struct {
	Name, Value string
}

// LauncherEnv points the implementation's mpirun at the hostfile and lets its
// SSH connections retry while workers start.
func LauncherEnv(impl Implementation, slotsPerWorker int32) []EnvVar {
	hostfile := ConfigDir + "/" + HostfileKey
	slots := strconv.FormatInt(int64(slotsPerWorker), 10)
	const sshRetries = "-o ConnectionAttempts=10"
	switch impl {
	case Intel:
		return []EnvVar{
			{"I_MPI_HYDRA_HOST_FILE", hostfile},
			{"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", sshRetries},
			{"I_MPI_PERHOST", slots},
		}
	case MPICH:
		return []EnvVar{
			{"HYDRA_HOST_FILE", hostfile},
			{"HYDRA_LAUNCH_EXTRA_ARGS", sshRetries},
		}
	default:
		return []EnvVar{
			// Keep the hostfile's names: they resolve, the short ones do not.
			{"OMPI_MCA_orte_keep_fqdn_hostnames", "true"},
			{"OMPI_MCA_orte_default_hostfile", hostfile},
			{"OMPI_MCA_plm_rsh_args", sshRetries},
			{"OMPI_MCA_orte_set_default_slots", slots},
		}
	}
}

// LaunchesBackToLauncher reports whether the implementation's remote
// processes connect back to the launcher by its hostname (Hydra does; Open
// MPI's daemons use addresses), so the launcher's short name must resolve.
func LaunchesBackToLauncher(impl Implementation) bool {
	return impl == Intel || impl == MPICH
}

// WaitTimeoutEnv bounds WaitForWorkers: the seconds it waits without another
// worker answering.
const WaitTimeoutEnv = "TRAINFN_WAIT_TIMEOUT_SECONDS"

// DefaultWaitTimeout, in seconds, leaves room for worker images to be pulled.
const DefaultWaitTimeout = "600"

// WaitForWorkers is a POSIX shell script that returns once every host in the
// hostfile but the launcher's own accepts an SSH session from the launcher's
// user. It fails, with ssh's last error, when WaitTimeoutEnv seconds pass
// without another worker answering: a stall is bounded, however many workers
// a large job checks in turn. Retrying inside one process keeps a slow start
// from counting against the launcher's backoffLimit. It uses the image's own
// ssh, with the job's key, the image's ssh_config and the extra ssh arguments
// the implementation's variables give mpirun (a port, say), so it proves
// exactly what mpirun will need.
const WaitForWorkers = `#!/bin/sh
# Rendered by trainfn: returns once every worker in the hostfile accepts SSH,
# so mpirun never starts before its hosts do. Gives up when
# ` + WaitTimeoutEnv + ` pass without another worker answering.
set -f
timeout=${` + WaitTimeoutEnv + `:-` + DefaultWaitTimeout + `}
case $timeout in
''|*[!0-9]*)
  printf 'trainfn: ` + WaitTimeoutEnv + ` must be a number of seconds, not "%s"\n' "$timeout" >&2
  exit 1 ;;
esac
if ! command -v ssh >/dev/null 2>&1; then
  echo "trainfn: the launcher's image has no ssh, which mpirun needs to start processes on the workers" >&2
  exit 1
fi
self=$(cat /etc/hostname 2>/dev/null || hostname)
self=${self%%.*}
extra="${OMPI_MCA_plm_rsh_args-} ${I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS-} ${HYDRA_LAUNCH_EXTRA_ARGS-}"
since=$(date +%s)
while read -r host _; do
  host=${host%%:*}
  case $host in ""|"#"*) continue ;; esac
  [ "${host%%.*}" = "$self" ] && continue
  tries=0
  until err=$(ssh -n -o BatchMode=yes -o ConnectTimeout=5 -o ConnectionAttempts=1 \
      -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
      $extra "$host" true 2>&1); do
    waited=$(( $(date +%s) - since ))
    if [ "$waited" -ge "$timeout" ]; then
      printf 'trainfn: worker %s did not accept SSH within %ss: %s\n' "$host" "$timeout" "$err" >&2
      exit 1
    fi
    [ $((tries % 15)) -eq 0 ] && printf 'trainfn: waiting for %s (%ss): %s\n' "$host" "$waited" "$err"
    tries=$((tries + 1))
    sleep 2
  done
  printf 'trainfn: %s accepts SSH\n' "$host"
  since=$(date +%s)
done < ` + ConfigDir + "/" + HostfileKey + `
`
