package mpi

import (
	"strconv"
	"strings"

	"github.com/trainfn/trainfn/render/supervise"
)

// Keys of the job's ConfigMap that run the launcher's and the workers'
// commands so that a job starts and ends with no controller: Launch on
// the launcher, Work on every worker.
const (
	LaunchKey = "launch.sh"
	WorkKey   = "work.sh"
)

// RunDir is a pod's own scratch directory (an emptyDir), which outlives
// its container's restarts: where Work listens for what the launcher tells
// it, and where Launch's wait records that the workers were placed.
const RunDir = "/run/trainfn"

// FailuresAllowedEnv tells Launch how many failed attempts the launcher's
// Job outlives: the one after them fails the Job, and ends the workers.
// The Job counts a failed pod (restartPolicy Never) or a restart of its
// container (OnFailure); it fails past backoffLimit failed pods, but at
// backoffLimit restarts, killing the attempt then running
// (FailuresAllowed).
const FailuresAllowedEnv = "TRAINFN_FAILURES_ALLOWED"

// WorkersEndEnv, "false" on the launcher, keeps the workers running when
// the job ends (cleanPodPolicy None).
const WorkersEndEnv = "TRAINFN_END_WORKERS"

// DefaultBackoffLimit is a Job's backoffLimit when its spec gives none.
const DefaultBackoffLimit = 6

// FailuresAllowed is how many failed attempts a Job of the given
// backoffLimit and pod restartPolicy outlives.
func FailuresAllowed(backoffLimit int32, restartPolicy string) int32 {
	if restartPolicy == "OnFailure" {
		return max(backoffLimit-1, 0)
	}
	return backoffLimit
}

// StoppedExitCode is what Work exits with when the kubelet stops the worker
// (its pod deleted, evicted or preempted): not 0, which would count the
// worker's index complete, so that its Job makes the pod again.
const StoppedExitCode = 143

// launchScript is the launcher's command, the container's own command and
// arguments passed to it. It waits for the workers as mpirun will reach
// them (WaitForWorkersKey), at every attempt whatever the pod's
// restartPolicy, runs the command, again in the same attempt when it
// failed while a worker was not there (a disruption: the workers' Job
// makes the worker again without counting a failure, and so does the
// launcher), and once the job has ended tells a worker so: when the command succeeded, or failed at the attempt past
// FailuresAllowedEnv. The launcher cannot read its Job's count of failures
// (it has no API access in the SSH and Rsh launch modes), so the workers,
// who outlive its attempts, count them: every failed attempt is told,
// a failed wait included. A launcher the kubelet stops (deleted, evicted)
// tells nothing unless its command had succeeded: its Job makes another
// attempt. The wait keeps placedMark in RunDir, the launcher's emptyDir:
// once workers were placed, a later attempt does not wait for them
// forever when their Job has failed.
func launchScript(r remoteShell) string {
	return strings.NewReplacer(
		"{{configDir}}", ConfigDir,
		"{{wait}}", WaitForWorkersKey,
		"{{placed}}", PlacedMark,
		"{{hostfile}}", ConfigDir+"/"+HostfileKey,
		"{{failuresEnv}}", FailuresAllowedEnv,
		"{{defaultFailures}}", strconv.Itoa(DefaultBackoffLimit),
		"{{endEnv}}", WorkersEndEnv,
		"{{extra}}", r.extra,
		"{{run}}", r.run,
		"{{fifo}}", RunDir+"/"+endFIFO,
		"{{stopped}}", strconv.Itoa(StoppedExitCode),
		"{{gone}}", strconv.Itoa(WorkersGoneExitCode),
		"{{supervise}}", supervise.Function,
	).Replace(launchTemplate)
}

// LaunchOverSSH is Launch for the SSH launch mode, with impl's mpirun's
// ssh arguments.
func LaunchOverSSH(impl Implementation) string { return launchScript(overSSH(impl)) }

// LaunchOverRsh and LaunchOverKubectlExec are the launcher's command in
// the Rsh and KubectlExec launch modes.
var (
	LaunchOverRsh         = launchScript(overRsh)
	LaunchOverKubectlExec = launchScript(overKubectlExec)
)

// endFIFO is the pipe in RunDir that Work reads the launcher's word from.
const endFIFO = "end"

// placedMark is the file in the launcher's RunDir that the wait for the
// workers leaves once a worker resolves, so that the attempts after it
// know the workers were placed.
const placedMark = "placed"

// PlacedMark is placedMark's path, the argument the launcher's wait for
// the workers is given, whether Launch runs it or an init container.
const PlacedMark = RunDir + "/" + placedMark

const launchTemplate = `#!/bin/sh
# Rendered by trainfn: the launcher's command runs once every worker can be
# reached (at every attempt), and when the job has ended a worker is told,
# which ends the workers' Job: they stop and free what they hold, with no
# controller.
set -f
{{supervise}}# The wait records in this pod's own scratch directory that the workers were
# placed: a later attempt, the container restarted, then knows that workers
# that do not resolve are gone, not waiting for room.
supervise /bin/sh {{configDir}}/{{wait}} {{placed}}
ran=
while [ "$code" -eq 0 ] && [ -z "$stopped" ]; do
  supervise "$@"
  ran=1
  # {{gone}} is the wait's word that the workers are gone, which fails the
  # launcher's Job at once: from the command it is a failure like others.
  [ "$code" -eq {{gone}} ] && code=1
  { [ "$code" -eq 0 ] || [ -n "$stopped" ]; } && break
  # A worker that does not answer once the command has failed was taken
  # away (its node lost, its pod deleted, evicted or preempted): the failure
  # is that disruption's, as Kubernetes marks its pod (DisruptionTarget),
  # not the command's. It costs the job this run, not an attempt of its
  # backoffLimit: the command runs again in this attempt once every worker
  # answers. When every worker answers, the failure is the command's.
  failed=$code
  supervise /bin/sh {{configDir}}/{{wait}} {{placed}} once
  if [ "$code" -eq 0 ] || [ -n "$stopped" ]; then
    code=$failed
    break
  fi
  printf 'trainfn: the command failed (exit %s) while a worker was not there: a disruption, not the command: it runs again once every worker answers\n' "$failed"
  supervise /bin/sh {{configDir}}/{{wait}} {{placed}}
done
# From here on a stop ends the script at once: as PID 1 without a trap, the
# shell would ignore the kubelet's signal until its grace period ran out.
trap 'exit "$code"' TERM INT
if [ -n "$stopped" ] && { [ -z "$ran" ] || [ "$code" -ne 0 ]; }; then
  [ "$code" -eq 0 ] && code={{stopped}}
  exit "$code"
fi
[ "${{{endEnv}}:-true}" = false ] && exit "$code"
word=ended
[ "$code" -ne 0 ] && word="failed ${{{failuresEnv}}:-{{defaultFailures}}}"
# Every worker is tried in turn, in rounds a second apart, for 60 s at most
# whatever their number; a wait that failed is a failed attempt too, which
# the workers count, but what it could not reach is tried in one round only.
# A session may take 20 s to open, not the wait's 5: on a loaded node sshd
# answers late, and 5 s attempts for 30 s told no worker (found on a real
# node, each worker's sshd logging the sessions closed before their login).
rounds=60
[ -z "$ran" ] && rounds=1
connect_timeout=20
deadline=$(($(date +%s) + 60))
self=$(cat /etc/hostname 2>/dev/null || hostname)
self=${self%%.*}
# Written, not opened for reading too: the launcher may log in as another
# user than the worker's, and the pipe lets others only write. Work holds
# the pipe open for reading as long as it runs, so the write never blocks.
# Once the word is written the remote side says so: a worker told stops
# within a second, and may still cut the session before it ends well (found
# on a real node: the worker stopped, the launcher saw a failure and tried
# the others for the whole window), so what it said counts as much as how
# the session ended.
{{extra}}remote='f={{fifo}}; [ -p "$f" ] && echo '"$word"' >"$f" && echo delivered'
tell() {
  while read -r host _; do
    host=${host%%:*}
    case $host in ""|"#"*) continue ;; esac
    [ "${host%%.*}" = "$self" ] && continue
    [ "$(date +%s)" -ge "$deadline" ] && return 1
    heard=$({{run}} 2>/dev/null)
    status=$?
    case $status/$heard in
    0/* | */*delivered)
      told=$host
      return 0 ;;
    esac
  done < {{hostfile}}
  return 1
}
tries=0
until tell; do
  tries=$((tries + 1))
  if [ "$tries" -ge "$rounds" ] || [ "$(date +%s)" -ge "$deadline" ]; then
    echo "trainfn: no worker could be told that the launcher's attempt ended ($word): the workers run on until their Job is deleted" >&2
    exit "$code"
  fi
  sleep 1
done
printf 'trainfn: told %s the attempt ended: %s\n' "$told" "$word"
exit "$code"
`

// Idle is a command that waits until it is stopped, and then stops at
// once, for a pod that only lends its container to processes the launcher
// starts through kubectl exec. sleep alone, as the container's first
// process, has no handler for the kubelet's SIGTERM, which the kernel then
// ignores, and is killed only at the end of the grace period: found on a
// real node, 30 s after the job ended.
var Idle = []string{"/bin/sh", "-c", "trap 'exit " + strconv.Itoa(StoppedExitCode) + "' TERM INT; sleep 365d & wait", "idle"}

// FailedWorkerLingerEnv is how many seconds Work keeps a worker whose
// command failed before it ends (DefaultFailedWorkerLinger): long enough
// for its name to resolve, past the DNS server's cache of the name's
// absence, and for the launcher's next probe.
const FailedWorkerLingerEnv = "TRAINFN_FAILED_WORKER_LINGER"

// DefaultFailedWorkerLinger is FailedWorkerLingerEnv's default.
const DefaultFailedWorkerLinger = 15

// Work is a worker's command, the container's own command and arguments
// passed to it. It runs the command and stops it when the launcher says
// the job has ended, or has failed more often than the launcher's Job
// allows, and then exits 0: the workers' Job succeeds at its first
// succeeded index (its successPolicy) and stops the others. Stopped by
// the kubelet it exits StoppedExitCode, and a command that ends by itself
// is a failure, which it outlives by FailedWorkerLingerEnv seconds: either
// way the Job makes the worker again under the same hostname. The pipe the
// launcher writes to is open for writing by any user, as the launcher may
// log in as another user than the worker's server runs as.
var Work = strings.NewReplacer(
	"{{lingerEnv}}", FailedWorkerLingerEnv,
	"{{linger}}", strconv.Itoa(DefaultFailedWorkerLinger),
	"{{run}}", RunDir,
	"{{fifo}}", endFIFO,
	"{{stopped}}", strconv.Itoa(StoppedExitCode),
).Replace(workTemplate)

const workTemplate = `#!/bin/sh
# Rendered by trainfn: runs the worker's command until the launcher says the
# job has ended, and exits 0 then; stopped by the kubelet, exits {{stopped}}
# so that the worker is made again.
set -f
end={{run}}/{{fifo}}
ended={{run}}/ended
stopped=
child=
trap 'stopped=1; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' TERM INT
rm -f "$end" "$end.new" "$ended"
# The pipe is held open before it is there to write to: a word written to
# a pipe nobody holds would be lost.
# "command" keeps a failed redirection from ending the script, as it would
# on exec, a special built-in.
if ! { mkfifo -m 0622 "$end.new" && command exec 3<>"$end.new" && mv "$end.new" "$end"; } 2>/dev/null; then
  echo "trainfn: cannot make $end: this worker will not stop when the job ends" >&2
  trap - TERM INT
  exec "$@"
fi
"$@" 3>&- &
child=$!
[ -n "$stopped" ] && kill -TERM "$child" 2>/dev/null
(
  trap - TERM INT
  failed=0
  while read -r word limit <&3; do
    case $word in
    ended) ;;
    failed)
      failed=$((failed + 1))
      case $limit in ''|*[!0-9]*) limit=0 ;; esac
      [ "$failed" -le "$limit" ] && continue ;;
    *) continue ;;
    esac
    : > "$ended"
    # The session that told it ends first, rather than cut by the
    # container's end: the launcher then knows it was heard.
    sleep 1
    kill -TERM "$child" 2>/dev/null
    exit 0
  done
) >/dev/null 2>&1 &
listener=$!
while :; do
  wait "$child"
  code=$?
  kill -0 "$child" 2>/dev/null || break
done
# The listener may have been forked with this script's trap, and ignore
# TERM: it holds nothing, and is killed.
kill -KILL "$listener" 2>/dev/null
if [ -e "$ended" ]; then
  echo "trainfn: the job ended: this worker stops"
  exit 0
fi
[ -n "$stopped" ] && exit {{stopped}}
if [ "$code" -eq 0 ]; then
  echo "trainfn: the worker's command ($1) ended before the job did" >&2
  code=1
fi
# The failed worker stays a while, its name resolving, so that a launcher
# waiting for the workers finds them placed: when their Job fails at this
# failure, the launcher then knows they are gone, not waiting for room, and
# ends. A worker that failed at once would often be gone before the
# launcher's probe, or its resolver, saw it.
# It hears no word meanwhile: a launcher that reached it would take the word
# as delivered, and tell no other worker.
rm -f "$end"
exec 3<&-
linger=${{{lingerEnv}}:-{{linger}}}
case $linger in ''|*[!0-9]*) linger={{linger}} ;; esac
printf 'trainfn: the worker failed (status %s): it ends in %ss\n' "$code" "$linger" >&2
sleep "$linger" &
child=$!
[ -n "$stopped" ] && kill -TERM "$child" 2>/dev/null
wait "$child"
exit "$code"
`
