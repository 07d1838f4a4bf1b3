// Package mpi knows what each MPI implementation needs from the files and the
// environment a launcher gets: the hostfile format, the variables that point
// mpirun at it, and the scripts that run beside it. It knows nothing of job
// APIs, so every MPIJob generation shares it.
package mpi

import (
	"slices"
	"strconv"
	"strings"

	"github.com/trainfn/trainfn/render/handoff"
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
	WaitForWorkersKey = "wait_for_workers.sh"
	KubexecKey        = "kubexec.sh"
)

// Hostfile writes hosts in the implementation's hostfile format: OpenMPI's
// "host slots=N", or Hydra's "host:N" for Intel MPI and MPICH.
func Hostfile(impl Implementation, hosts []handoff.Host) string {
	var b strings.Builder
	for _, h := range hosts {
		b.WriteString(hostLine(impl, h.Name, h.Slots) + "\n")
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
			remote("HYDRA_LAUNCHER_EXTRA_ARGS", EnvVar{"HYDRA_LAUNCHER", "rsh"}, EnvVar{"HYDRA_LAUNCHER_EXEC", agent}))
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
// worker answering, counted from the first worker that resolves.
const WaitTimeoutEnv = "TRAINFN_WAIT_TIMEOUT_SECONDS"

// DefaultWaitTimeout, in seconds, leaves room for worker images to be pulled.
const DefaultWaitTimeout = "600"

// WorkersGoneExitCode is what WaitForWorkers exits with when it finds the
// workers gone: placed once, or placed with the launcher, and none
// resolving for its bound. It is sysexits.h's EX_UNAVAILABLE. A launcher
// whose pods restart Never fails its Job at it at once (its
// podFailurePolicy): the next pod would start without the record that the
// workers were placed, and wait for them as for room.
const WorkersGoneExitCode = 69

// PlacedTogetherEnv, "true" on the launcher of a job that a gang scheduler
// places all at once (every pod in its gang), tells WaitForWorkers that
// the workers were placed with the launcher: when it runs they are
// placed, or were and are gone, and its stall timer starts at once.
const PlacedTogetherEnv = "TRAINFN_PLACED_TOGETHER"

// WaitParallelEnv bounds how many workers WaitForWorkers probes at once;
// each remote shell has its own default (remoteShell.parallel).
const WaitParallelEnv = "TRAINFN_WAIT_PARALLEL"

// DefaultWaitParallel is how many workers WaitForWorkers probes at once
// over SSH: an ssh client holds a few MiB while it connects, and 32 of
// them fit in the memory a launcher asks for.
const DefaultWaitParallel = "32"

// WaitForWorkers is a POSIX shell script that returns once every host in the
// hostfile but the launcher's own accepts an SSH session from the launcher's
// user. It probes the workers in rounds, many at a time, so that a job of
// thousands of workers starts moments after its last one can; each round
// after the first probes only the workers that did not answer, 50 ms
// after the one before for the first seconds, when the workers' servers
// come up, then backing off to a second. Until a worker resolves the
// workers wait for room (a queue, a gang scheduler, a full node), which it
// waits out; from then on it fails, with ssh's last error, when
// WaitTimeoutEnv seconds pass without another worker answering: a stall
// is bounded, however many workers there are, and so is each probe, whose
// connection ssh drops once the worker stops answering
// (ServerAliveInterval) rather than another process timing it, which a
// start of thousands of probes would pay for.
// Given "once" as its second argument, it probes every worker once and
// fails unless all answered: the launcher's check, after its command
// failed, that no worker was taken away meanwhile.
// Given a file as its argument (Launch's placedMark), it records there
// that a worker resolved, and starts the stall timer at once when an
// earlier attempt of its pod did: workers placed once that no longer
// resolve, or whose address nothing answers at any more (unreachable),
// are gone (their Job failed, or was deleted), not waiting for room, and
// it says so when it gives up. So it does too when a gang
// scheduler placed the workers with the launcher (PlacedTogetherEnv).
// Retrying inside one process keeps a slow start from counting against the
// launcher's backoffLimit. It uses the image's own ssh, with the job's key,
// the image's ssh_config and the extra ssh arguments mpirun will use (a
// port, say): WaitSSHArgsEnv, which the render sets from mpirun's command
// line, or else the first of the implementation's SSHArgsVars that is set.
// So it proves exactly what mpirun will need.
func WaitForWorkers(impl Implementation) string {
	return waitScript(overSSH(impl))
}

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
	// parallel is how many probes run at once unless WaitParallelEnv
	// says otherwise, bounded by what a client costs the launcher.
	parallel string
	// unresolved is a case pattern matching a probe's error when the
	// worker does not exist yet for the remote shell (no name, no pod):
	// the stall timer waits for the first worker that does.
	unresolved string
	// run runs "$remote" on "$host" as mpirun's remote processes will
	// be run, and fails when it did not run.
	run string
}

// sshRun opens a session on "$host" as the wait and the launcher's word to
// the workers both do: bounded (5 s to open, or $connect_timeout, the
// handshake included; then 30 s without an answer), non-interactive, with
// mpirun's extra ssh arguments; the remote command follows. The wait's
// session opens the connection that mpirun's sessions then ride on
// (SSHConfig), with its options: half a minute, not seconds, so that a blip
// of the network does not end a run, while a worker whose node is lost
// silently ends mpirun's sessions within it, and the launcher's word, its
// window a minute, still reaches another worker.
const sshRun = `ssh -n -o BatchMode=yes -o ConnectTimeout=${connect_timeout:-5} -o ConnectionAttempts=1 \
      -o ServerAliveInterval=5 -o ServerAliveCountMax=6 \
      -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
      $extra "$host"`

func overSSH(impl Implementation) remoteShell {
	extra := "${" + WaitSSHArgsEnv + "-"
	closing := "}"
	for _, v := range SSHArgsVars(impl) {
		extra += "${" + v + "-"
		closing += "}"
	}
	return remoteShell{
		accepts: "accepts SSH",
		accept:  "accept SSH",
		check: `if ! command -v ssh >/dev/null 2>&1; then
  echo "trainfn: the launcher's image has no ssh, which mpirun needs to start processes on the workers" >&2
  exit 1
fi
`,
		extra: `extra="` + extra + closing + `"
`,
		probe:      sshRun + ` true`,
		parallel:   DefaultWaitParallel,
		unresolved: `*"Could not resolve hostname"*`,
		run:        sshRun + ` "$remote"`,
	}
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
	// A kubectl takes tens of MiB, and each a request of the API server.
	parallel: "4",
	// No pod yet: none of the Indexed Job's (Kubexec's own words), or
	// none of the StatefulSet's (the API server's NotFound); or a pod the
	// scheduler has not placed.
	unresolved: `*"` + noPod + `"*|*"(NotFound)"*|*"does not have a host assigned"*`,
	run:        `/bin/sh ` + ConfigDir + "/" + KubexecKey + ` "$host" "$remote" </dev/null`,
}

func waitScript(r remoteShell) string {
	return strings.NewReplacer(
		"{{timeoutEnv}}", WaitTimeoutEnv,
		"{{defaultTimeout}}", DefaultWaitTimeout,
		"{{togetherEnv}}", PlacedTogetherEnv,
		"{{gone}}", strconv.Itoa(WorkersGoneExitCode),
		"{{parallelEnv}}", WaitParallelEnv,
		"{{defaultParallel}}", r.parallel,
		"{{hostfile}}", ConfigDir+"/"+HostfileKey,
		"{{accepts}}", r.accepts,
		"{{accept}}", r.accept,
		"{{check}}", r.check,
		"{{extra}}", r.extra,
		"{{probe}}", r.probe,
		"{{unresolved}}", r.unresolved,
		"{{unreachable}}", unreachable,
	).Replace(waitTemplate)
}

// unreachable are the errors of a worker whose name resolves to an address
// nothing answers at: no pod has it any more, as for a while after the pod
// is gone, before its name leaves the cluster's DNS (found on a loaded
// node: 49 s after the workers failed, one still resolved, and its
// connection timed out). Such a worker counts as placed, for the stall
// timer, but not as there, when the timer runs out.
const unreachable = `*"Connection timed out"*|*"No route to host"*|*"Host is unreachable"*|*"Network is unreachable"*`

// waitTemplate probes in rounds and keeps no file of its own (the
// launcher's file system may be read-only): each probe of a round writes
// one line, "ok HOST" or "no HOST ERROR", shorter than a pipe's atomic
// write, into the pipe the round's output is read from.
const waitTemplate = `#!/bin/sh
# Rendered by trainfn: returns once every worker in the hostfile {{accepts}},
# so mpirun never starts before its hosts do. Probes {{parallelEnv}}
# workers at a time; once a worker resolves, gives up when {{timeoutEnv}}
# pass without another worker answering. Its argument, if any, is a file
# that records, across the attempts of one pod, that the workers were placed;
# a second argument "once" probes every worker once, and fails unless all
# answered.
set -f
placed=${1-}
# "once" probes every worker once and says whether all answered.
once=${2-}
timeout=${{{timeoutEnv}}:-{{defaultTimeout}}}
case $timeout in
''|*[!0-9]*)
  printf 'trainfn: {{timeoutEnv}} must be a number of seconds, not "%s"\n' "$timeout" >&2
  exit 1 ;;
esac
parallel=${{{parallelEnv}}:-{{defaultParallel}}}
case $parallel in
''|*[!0-9]*|0)
  printf 'trainfn: {{parallelEnv}} must be a number of workers, at least 1, not "%s"\n' "$parallel" >&2
  exit 1 ;;
esac
{{check}}self=$(cat /etc/hostname 2>/dev/null || hostname)
self=${self%%.*}
{{extra}}probe_all() {
  n=0
  while read -r host _; do
    host=${host%%:*}
    case $host in ""|"#"*) continue ;; esac
    [ "${host%%.*}" = "$self" ] && continue
    {
      if err=$({{probe}} 2>&1); then
        printf 'ok %s\n' "$host"
      else
        set -- $err
        printf 'no %s %.200s\n' "$host" "$*"
      fi
    } &
    n=$((n + 1))
    if [ "$n" -ge "$parallel" ]; then
      wait
      n=0
    fi
  done
  wait
}
# The stall timer starts once a worker resolves: until then the workers
# wait for room (a queue, a gang scheduler, a full node), which is no stall.
# Workers an earlier attempt found placed, or that a gang scheduler placed
# with the launcher, wait for no room: if none resolves now, their pods are
# gone (their Job failed, or was deleted), and would never come back, so
# the timer starts at once.
since=
said_at=
delay=0.05
began=$(date +%s)
if [ -n "$once" ]; then
  :
elif [ -n "$placed" ] && [ -e "$placed" ]; then
  since=$began
  printf 'trainfn: an earlier attempt found the workers placed: this one waits %ss at most without a worker answering\n' "$timeout"
elif [ "${{{togetherEnv}}:-}" = true ]; then
  since=$began
  printf 'trainfn: the gang scheduler placed the workers with the launcher: the wait gives up after %ss without a worker answering\n' "$timeout"
fi
results=$(probe_all < {{hostfile}})
while :; do
  pending=
  left=0
  answered=
  resolved=
  there=
  while read -r said host reason; do
    case $said in
    ok)
      printf 'trainfn: %s {{accepts}}\n' "$host"
      answered=1 ;;
    no)
      case $reason in
      {{unresolved}}) ;;
      {{unreachable}}) resolved=1 ;;
      *) resolved=1 there=1 ;;
      esac
      if [ "$left" -eq 0 ]; then
        first=$host
        err=$reason
      fi
      left=$((left + 1))
      pending="$pending$host
" ;;
    esac
  done <<HOSTS
$results
HOSTS
  # In a subshell: a redirection that fails (no such directory, a
  # read-only one) would end the shell itself on the special built-in.
  if [ -n "$placed" ] && { [ -n "$answered" ] || [ -n "$resolved" ]; } && [ ! -e "$placed" ]; then
    (: > "$placed") 2>/dev/null
  fi
  [ "$left" -eq 0 ] && exit 0
  if [ -n "$once" ]; then
    printf 'trainfn: %s did not {{accept}}: %s\n' "$first" "$err"
    exit 1
  fi
  now=$(date +%s)
  if [ -n "$answered" ] || { [ -z "$since" ] && [ -n "$resolved" ]; }; then
    since=$now
  fi
  waited=0
  [ -n "$since" ] && waited=$((now - since))
  others=
  [ "$left" -gt 1 ] && others=" and $((left - 1)) more"
  if [ "$waited" -ge "$timeout" ]; then
    if [ -z "$there" ]; then
      printf "trainfn: no worker is placed now (%s%s: %s), and none has answered for %ss: their pods are gone, as when the workers' Job has failed or was deleted\n" "$first" "$others" "$err" "$timeout" >&2
      exit {{gone}}
    else
      printf 'trainfn: worker %s did not {{accept}} within %ss: %s\n' "$first" "$timeout" "$err" >&2
    fi
    exit 1
  fi
  if [ -z "$said_at" ] || [ $((now - said_at)) -ge 30 ]; then
    if [ -n "$since" ]; then
      printf 'trainfn: waiting for %s%s (%ss): %s\n' "$first" "$others" "$waited" "$err"
    else
      printf 'trainfn: waiting for %s%s to be placed (no worker resolves yet): %s\n' "$first" "$others" "$err"
    fi
    said_at=$now
  fi
  # Retry every 50 ms for the first seconds, when workers' servers come
  # up, then back off to a second; an image whose sleep takes whole
  # seconds only waits the second.
  sleep "$delay" 2>/dev/null || sleep 1
  if [ $((now - began)) -ge 3 ]; then
    case $delay in
    0.05) delay=0.2 ;;
    0.2) delay=0.5 ;;
    *) delay=1 ;;
    esac
  fi
  results=$(printf '%s' "$pending" | probe_all)
done
`

// KubectlDir is where the KubectlExec launcher finds kubectl, delivered by
// an init container.
const KubectlDir = "/opt/kube"

// KubectlPath is the kubectl Kubexec runs when it is there; otherwise the
// image's own, from PATH.
const KubectlPath = KubectlDir + "/kubectl"

// DeliveryContainer is the launcher's init container that delivers
// kubectl, running DeliveryCommand in the run's delivery image.
//
// The command is explicit: of mpioperator/kubectl-delivery, only its
// kubectl, at /bin/kubectl in every version of the image, is used. The
// image's own entrypoint differs by version, and its later one also reads
// /etc/mpi/hostfile for pod names (trainfn's lists hostnames) and lists
// and watches every pod of the namespace until those run, which the
// launcher's Role does not allow, nor need: the launcher waits otherwise.
const DeliveryContainer = "kubectl-delivery"

// DeliveryCommand copies the delivery image's kubectl to KubectlPath.
var DeliveryCommand = []string{"cp", "/bin/kubectl", KubectlPath}

// DeliveryCPU and DeliveryMemory are the delivery container's requests
// and limits alike: a copy of one file.
const (
	DeliveryCPU    = "100m"
	DeliveryMemory = "128Mi"
)

// Kubexec is mpirun's remote shell in the KubectlExec launch mode
// (mpi-operator v1alpha1's kubexec.sh): called as
// `kubexec.sh HOST COMMAND...`, it runs the command in the container of
// the worker pod the host names. A static job's workers are an Indexed
// Job, named indexedJob, whose pods' names the Job controller makes up:
// the pod is the one of that Job with the host's index that has not
// ended. An elastic job's workers are a StatefulSet (indexedJob empty),
// whose pods are named as their hosts. Workers of several Indexed Jobs
// whose hosts are named <Job>-<index> pass JobOfHost.
func Kubexec(container, indexedJob string) string {
	find := `pod=$host
`
	if indexedJob != "" {
		find = `pod=$("$kubectl" get pods -o 'jsonpath={.items[-1:].metadata.name}' \
  --selector "batch.kubernetes.io/job-name=` + indexedJob + `,batch.kubernetes.io/job-completion-index=${host##*-}" \
  --field-selector 'status.phase!=Succeeded,status.phase!=Failed') || exit
if [ -z "$pod" ]; then
  echo "` + noPod + ` $host" >&2
  exit 1
fi
`
	}
	return `#!/bin/sh
# Rendered by trainfn: mpirun's remote shell, through kubectl exec.
set -f
host=${1%%.*}
shift
kubectl=` + KubectlPath + `
[ -x "$kubectl" ] || kubectl=kubectl
` + find + `exec "$kubectl" exec "$pod" --container ` + container + ` -- /bin/sh -c "$*"
`
}

// JobOfHost is Kubexec's indexedJob when a host's name is its Job's and
// its index, <Job>-<index>, as JobSet names its pods' hosts: the shell
// expands it from the host.
const JobOfHost = "${host%-*}"

// noPod starts what Kubexec says when no pod runs a worker yet.
const noPod = "trainfn: no pod is running worker"
