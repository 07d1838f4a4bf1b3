// Package mpi knows what each MPI implementation needs from the files and the
// environment a launcher gets: the hostfile format, the variables that point
// mpirun at it, and the scripts that run beside it. It knows nothing of job
// APIs, so every MPIJob generation shares it.
package mpi

import (
	"slices"
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
	KubexecKey        = "kubexec.sh"
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
		b.WriteString(hostLine(impl, h.Name, h.Slots) + "\n")
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
		b.WriteString(discoverLine(h.Name, h.Slots) + "\n")
	}
	return b.String()
}

// EnvVar is a container environment variable.
type EnvVar struct {
	Name, Value string
}

// LauncherEnv points the implementation's mpirun at the hostfile. With no
// agent, mpirun starts remote processes over ssh, whose connections retry
// while workers start; otherwise agent is mpirun's remote shell.
func LauncherEnv(impl Implementation, slotsPerWorker int32, agent string) []EnvVar {
	hostfile := ConfigDir + "/" + HostfileKey
	slots := strconv.FormatInt(int64(slotsPerWorker), 10)
	const sshRetries = "-o ConnectionAttempts=10"
	remote := func(sshArgs string, viaAgent ...EnvVar) []EnvVar {
		if agent == "" {
			return []EnvVar{{sshArgs, sshRetries}}
		}
		return viaAgent
	}
	switch impl {
	case Intel:
		return slices.Concat(
			[]EnvVar{{"I_MPI_HYDRA_HOST_FILE", hostfile}},
			remote("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", EnvVar{"I_MPI_HYDRA_BOOTSTRAP", "rsh"}, EnvVar{"I_MPI_HYDRA_BOOTSTRAP_EXEC", agent}),
			[]EnvVar{{"I_MPI_PERHOST", slots}})
	case MPICH:
		return slices.Concat(
			[]EnvVar{{"HYDRA_HOST_FILE", hostfile}},
			remote("HYDRA_LAUNCH_EXTRA_ARGS", EnvVar{"HYDRA_LAUNCHER", "rsh"}, EnvVar{"HYDRA_LAUNCHER_EXEC", agent}))
	default:
		return slices.Concat(
			// Keep the hostfile's names: they resolve, the short ones do not.
			[]EnvVar{{"OMPI_MCA_orte_keep_fqdn_hostnames", "true"}, {"OMPI_MCA_orte_default_hostfile", hostfile}},
			// Without tree spawn, only the launcher runs the agent: no
			// worker needs the rights it takes.
			remote("OMPI_MCA_plm_rsh_args", EnvVar{"OMPI_MCA_plm_rsh_agent", agent}, EnvVar{"OMPI_MCA_plm_rsh_no_tree_spawn", "true"}),
			[]EnvVar{{"OMPI_MCA_orte_set_default_slots", slots}})
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
var WaitForWorkers = waitScript(overSSH)

// WaitForExec is WaitForWorkers for the KubectlExec launch mode: it returns
// once every worker runs a command through Kubexec, as mpirun's remote
// processes will be started.
var WaitForExec = waitScript(overKubectlExec)

// remoteShell is what the wait script says, checks and runs for one way of
// reaching the workers.
type remoteShell struct {
	// accepts completes "every worker ...", accept "did not ... within".
	accepts, accept string
	// check fails early when the launcher lacks the remote shell; extra
	// prepares what probe, a command that succeeds on "$host", needs.
	check, extra, probe string
}

var overSSH = remoteShell{
	accepts: "accepts SSH",
	accept:  "accept SSH",
	check: `if ! command -v ssh >/dev/null 2>&1; then
  echo "trainfn: the launcher's image has no ssh, which mpirun needs to start processes on the workers" >&2
  exit 1
fi
`,
	extra: `extra="${OMPI_MCA_plm_rsh_args-} ${I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS-} ${HYDRA_LAUNCH_EXTRA_ARGS-}"
`,
	probe: `ssh -n -o BatchMode=yes -o ConnectTimeout=5 -o ConnectionAttempts=1 \
      -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
      $extra "$host" true`,
}

var overKubectlExec = remoteShell{
	accepts: "runs commands through kubectl exec",
	accept:  "run commands through kubectl exec",
	check: `if [ ! -x ` + KubectlPath + ` ] && ! command -v kubectl >/dev/null 2>&1; then
  echo "trainfn: the launcher has no kubectl, which mpirun needs to start processes on the workers" >&2
  exit 1
fi
`,
	probe: `/bin/sh ` + ConfigDir + "/" + KubexecKey + ` "$host" true </dev/null`,
}

func waitScript(r remoteShell) string {
	return strings.NewReplacer(
		"{{timeoutEnv}}", WaitTimeoutEnv,
		"{{defaultTimeout}}", DefaultWaitTimeout,
		"{{hostfile}}", ConfigDir+"/"+HostfileKey,
		"{{accepts}}", r.accepts,
		"{{accept}}", r.accept,
		"{{check}}", r.check,
		"{{extra}}", r.extra,
		"{{probe}}", r.probe,
	).Replace(waitTemplate)
}

const waitTemplate = `#!/bin/sh
# Rendered by trainfn: returns once every worker in the hostfile {{accepts}},
# so mpirun never starts before its hosts do. Gives up when
# {{timeoutEnv}} pass without another worker answering.
set -f
timeout=${{{timeoutEnv}}:-{{defaultTimeout}}}
case $timeout in
''|*[!0-9]*)
  printf 'trainfn: {{timeoutEnv}} must be a number of seconds, not "%s"\n' "$timeout" >&2
  exit 1 ;;
esac
{{check}}self=$(cat /etc/hostname 2>/dev/null || hostname)
self=${self%%.*}
{{extra}}since=$(date +%s)
while read -r host _; do
  host=${host%%:*}
  case $host in ""|"#"*) continue ;; esac
  [ "${host%%.*}" = "$self" ] && continue
  tries=0
  until err=$({{probe}} 2>&1); do
    waited=$(( $(date +%s) - since ))
    if [ "$waited" -ge "$timeout" ]; then
      printf 'trainfn: worker %s did not {{accept}} within %ss: %s\n' "$host" "$timeout" "$err" >&2
      exit 1
    fi
    [ $((tries % 15)) -eq 0 ] && printf 'trainfn: waiting for %s (%ss): %s\n' "$host" "$waited" "$err"
    tries=$((tries + 1))
    sleep 2
  done
  printf 'trainfn: %s {{accepts}}\n' "$host"
  since=$(date +%s)
done < {{hostfile}}
`

// KubectlDir is where the KubectlExec launcher finds kubectl, delivered by
// an init container.
const KubectlDir = "/opt/kube"

// KubectlPath is the kubectl Kubexec runs when it is there; otherwise the
// image's own, from PATH.
const KubectlPath = KubectlDir + "/kubectl"

// Kubexec is mpirun's remote shell in the KubectlExec launch mode
// (mpi-operator v1alpha1's kubexec.sh): called as
// `kubexec.sh HOST COMMAND...`, it runs the command in the worker pod
// named by the host's first label, in its main container. Worker pods are named as their hosts (a StatefulSet's), so the
// launcher needs exec rights on those pods alone.
func Kubexec(container string) string {
	return `#!/bin/sh
# Rendered by trainfn: mpirun's remote shell, through kubectl exec.
set -f
pod=${1%%.*}
shift
kubectl=` + KubectlPath + `
[ -x "$kubectl" ] || kubectl=kubectl
exec "$kubectl" exec "$pod" --container ` + container + ` -- /bin/sh -c "$*"
`
}
