package mpi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/testtool"
)

// The launcher's and the workers' commands run here as in their pods, with
// their directories moved under a temporary one: the worker's command
// under work.sh, the launcher's under launch.sh, which tells the worker
// over a real sshd on loopback, with the real ssh client.

// worker is work.sh running a command, in its own scratch directory.
type worker struct {
	*testtool.Script
	run string
}

// startWorker starts work.sh; a worker that fails ends at once.
func startWorker(t *testing.T, run string, command ...string) *worker {
	t.Helper()
	return startWorkerWith(t, []string{FailedWorkerLingerEnv + "=0"}, run, command...)
}

func startWorkerWith(t *testing.T, env []string, run string, command ...string) *worker {
	t.Helper()
	script := strings.ReplaceAll(Work, RunDir, run)
	require.NotEqual(t, Work, script, "work.sh keeps its pipe in its scratch directory")
	w := &worker{Script: testtool.StartScript(t, env, script, "work.sh", command...), run: run}
	// work.sh listens once its pipe is there.
	require.Eventually(t, func() bool {
		fi, err := os.Stat(filepath.Join(run, endFIFO))
		return err == nil && fi.Mode()&os.ModeNamedPipe != 0
	}, 10*time.Second, 10*time.Millisecond, "work.sh made no pipe: %s", &w.Out)
	return w
}

// tell writes a word into the worker's pipe with the remote command the
// launcher's script runs on a worker; as another user when uid is given,
// as a launcher that logs in as another user than the worker runs as.
func (w *worker) tell(t *testing.T, word string, uid ...int) {
	t.Helper()
	var remote string
	for _, line := range strings.Split(LaunchOverSSH(OpenMPI), "\n") {
		if strings.HasPrefix(line, "remote=") {
			remote = strings.ReplaceAll(line, RunDir, w.run)
		}
	}
	require.NotEmpty(t, remote, "launch.sh sets the remote command")
	argv := []string{"/bin/sh", "-c", "word=$1; " + remote + `; eval "$remote"`, "tell", word}
	if len(uid) > 0 {
		id := strconv.Itoa(uid[0])
		argv = append([]string{testtool.Find(t, "setpriv"), "--reuid=" + id, "--regid=" + id, "--clear-groups", "--"}, argv...)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

func TestWorkEndsWhenTheJobEnds(t *testing.T) {
	w := startWorker(t, t.TempDir(), "sleep", "60")
	w.tell(t, "ended")
	assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "%s", &w.Out)
	assert.Contains(t, w.Out.String(), "trainfn: the job ended: this worker stops")
}

// Stopped by the kubelet, a worker fails: exit 0 would count its index
// complete, and its Job would not make it again.
func TestWorkStoppedByTheKubeletFails(t *testing.T) {
	run := t.TempDir()
	// Signalled between its fork and its exec, a command would take
	// work.sh's trap for its own and miss the signal, until the kubelet
	// kills it (137, a failure too): the signal comes once it runs.
	w := startWorker(t, run, "/bin/sh", "-c", "echo > "+run+"/started; exec sleep 60")
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(run, "started")); return err == nil }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, w.Cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, StoppedExitCode, w.ExitCode(t, 10*time.Second), "%s", &w.Out)
}

// The launcher's failed attempts are counted; the worker stops at the one
// past the launcher's backoffLimit, when its Job has failed.
func TestWorkCountsTheLaunchersFailures(t *testing.T) {
	w := startWorker(t, t.TempDir(), "sleep", "60")
	for range 2 {
		w.tell(t, "failed 2")
	}
	assert.Equal(t, -1, w.ExitCode(t, time.Second), "two failures of three allowed: the launcher tries again: %s", &w.Out)
	w.tell(t, "failed 2")
	assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "%s", &w.Out)
}

// The worker's server (sshd, rshd) often runs as root while the launcher
// logs in as the image's user: the pipe, in an emptyDir open to all, takes
// the word from another user.
func TestWorkHearsALauncherOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the worker and the launcher as two users")
	}
	run := t.TempDir()
	// The test's own folder, above it, lets only its owner in.
	require.NoError(t, os.Chmod(filepath.Dir(run), 0o711))
	require.NoError(t, os.Chmod(run, 0o777), "an emptyDir's mode")
	w := startWorker(t, run, "sleep", "60")
	w.tell(t, "ended", 65534)
	assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "%s", &w.Out)
}

func TestWorkIgnoresWhatItDoesNotKnow(t *testing.T) {
	w := startWorker(t, t.TempDir(), "sleep", "60")
	w.tell(t, "restart")
	assert.Equal(t, -1, w.ExitCode(t, time.Second), "%s", &w.Out)
}

// A server that ends by itself, unasked, is a failed worker; its own
// failure keeps its code.
func TestWorkCommandThatEndsByItself(t *testing.T) {
	for command, want := range map[string]int{"true": 1, "exit 7": 7} {
		w := startWorker(t, t.TempDir(), "/bin/sh", "-c", "sleep 0.5; "+command)
		assert.Equal(t, want, w.ExitCode(t, 10*time.Second), "%s: %s", command, &w.Out)
		if want == 1 {
			assert.Contains(t, w.Out.String(), "trainfn: the worker's command (/bin/sh) ended before the job did")
		}
	}
}

// A failed worker stays, its name resolving, so that a launcher waiting
// for the workers sees them placed before their Job fails; the kubelet's
// stop ends it at once, with its failure.
func TestWorkFailedWorkerStays(t *testing.T) {
	for _, env := range [][]string{nil, {FailedWorkerLingerEnv + "=30"}} {
		run := t.TempDir()
		w := startWorkerWith(t, env, run, "/bin/sh", "-c", "sleep 0.5; exit 7")
		require.Equal(t, -1, w.ExitCode(t, 2*time.Second), "the failed worker ended at once")
		assert.NoFileExists(t, filepath.Join(run, endFIFO), "a failed worker takes no word for the others")
		require.NoError(t, w.Cmd.Process.Signal(syscall.SIGTERM))
		assert.Equal(t, 7, w.ExitCode(t, 10*time.Second), "stopped, it ends with its failure: %s", &w.Out)
		assert.Contains(t, w.Out.String(), "trainfn: the worker failed (status 7): it ends in ")
	}
}

// launchIn is launch.sh with its configuration directory under dir: the
// hostfile, and a wait that returns at once.
func launchIn(t *testing.T, f *sshFixture, hosts string) (script, dir string) {
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, HostfileKey), []byte(hosts), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, WaitForWorkersKey), []byte("echo waited${2:+ $2}\n"), 0o644))
	script = strings.ReplaceAll(LaunchOverSSH(f.impl), ConfigDir, dir)
	return script, dir
}

func (f *sshFixture) launch(t *testing.T, script string, env []string, command ...string) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, "launch.sh"}, command...)...)
	cmd.Env = append(append(os.Environ(), f.env...), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, "%s", out)
	return string(out), 0
}

// launcherAndWorker is launch.sh, with its configuration directory, and a
// worker's work.sh whose sshd, on loopback, launch.sh reaches as mpirun
// would.
func launcherAndWorker(t *testing.T) (f *sshFixture, w *worker, script, dir string) {
	t.Helper()
	f = newSSHFixture(t)
	require.NoError(t, <-f.startSSHDAfter(t, 0))
	f.listening(t)
	run := t.TempDir()
	w = startWorker(t, run, "sleep", "60")
	script, dir = launchIn(t, f, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}}))
	return f, w, strings.ReplaceAll(script, RunDir, run), dir
}

// The launcher tells a worker over SSH, as mpirun reaches it, once its
// command has succeeded, and keeps the command's code.
func TestLaunchTellsAWorkerTheJobEnded(t *testing.T) {
	f, w, script, _ := launcherAndWorker(t)

	out, code := f.launch(t, script, nil, "/bin/sh", "-c", "echo ran mpirun")
	assert.Equal(t, 0, code, out)
	assert.Equal(t, "waited\nran mpirun\ntrainfn: told localhost the attempt ended: ended\n", out)
	assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "%s", &w.Out)
}

// A worker told stops at once and may cut the session that told it: the
// word was heard, and the launcher ends, rather than try the others for
// the whole window. Here a real ssh reaches the worker and its session is
// then reported cut (ssh's 255).
func TestLaunchTellsAWorkerThatCutsTheSession(t *testing.T) {
	f, w, script, _ := launcherAndWorker(t)
	ssh, err := exec.LookPath("ssh")
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "ssh"), []byte("#!/bin/sh\n"+ssh+" \"$@\"\nexit 255\n"), 0o755))
	f.env = append(f.env, "PATH="+bin+":"+os.Getenv("PATH"))

	out, code := f.launch(t, script, nil, "/bin/sh", "-c", "echo ran mpirun")
	assert.Equal(t, 0, code, out)
	assert.Equal(t, "waited\nran mpirun\ntrainfn: told localhost the attempt ended: ended\n", out)
	assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "%s", &w.Out)
}

// A failed attempt is told with the launcher's backoffLimit, and the
// launcher keeps its code; with cleanPodPolicy None it tells nothing.
func TestLaunchTellsAFailedAttempt(t *testing.T) {
	f, w, script, _ := launcherAndWorker(t)

	out, code := f.launch(t, script, []string{WorkersEndEnv + "=false"}, "/bin/sh", "-c", "exit 3")
	assert.Equal(t, 3, code, out)
	assert.Equal(t, "waited\nwaited once\n", out, "cleanPodPolicy None: every worker answers, nothing told")

	for attempt := range 2 {
		out, code = f.launch(t, script, []string{FailuresAllowedEnv + "=1"}, "/bin/sh", "-c", "exit 3")
		assert.Equal(t, 3, code, out)
		assert.Contains(t, out, "trainfn: told localhost the attempt ended: failed 1")
		if attempt == 0 {
			assert.Equal(t, -1, w.ExitCode(t, time.Second), "one retry left: %s", &w.Out)
		}
	}
	assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "the Job has failed: %s", &w.Out)
}

// A command that failed while a worker was not there (the wait's probe,
// once, failed) failed for a disruption: it runs again in the same
// attempt once the workers answer, and the attempt is the command's last
// run's. One that fails while every worker answers fails the attempt.
func TestLaunchRunsAgainAfterADisruption(t *testing.T) {
	f, w, script, dir := launcherAndWorker(t)
	// The first probe after a failure finds a worker gone; the next wait
	// finds it back, and later probes find every worker.
	wait := `echo "waited${2:+ $2}"
if [ "${2-}" = once ] && [ ! -e "$0.probed" ]; then
  : > "$0.probed"
  echo "a worker did not answer"
  exit 1
fi
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, WaitForWorkersKey), []byte(wait), 0o644))
	runs := filepath.Join(t.TempDir(), "runs")
	// The command fails at its first run, as mpirun does when a worker
	// goes, and succeeds at its second.
	command := `echo run >> "$1"; [ "$(wc -l < "$1")" -ge 2 ] && echo ran mpirun || exit 3`

	out, code := f.launch(t, script, nil, "/bin/sh", "-c", command, "mpirun", runs)
	assert.Equal(t, 0, code, out)
	assert.Equal(t, "waited\nwaited once\na worker did not answer\n"+
		"trainfn: the command failed (exit 3) while a worker was not there: a disruption, not the command: it runs again once every worker answers\n"+
		"waited\nran mpirun\ntrainfn: told localhost the attempt ended: ended\n", out)
	assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "the job ended: %s", &w.Out)

	// Every worker answers: the failure is the command's.
	out, code = f.launch(t, script, []string{WorkersEndEnv + "=false"}, "/bin/sh", "-c", "exit 4")
	assert.Equal(t, 4, code, out)
	assert.Equal(t, "waited\nwaited once\n", out)
}

// A launcher that waited in vain runs nothing, but its attempt failed
// all the same: the workers that can be reached count it, or they would
// outlive the launcher's Job.
func TestLaunchTellsAFailedWait(t *testing.T) {
	f, w, script, dir := launcherAndWorker(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, WaitForWorkersKey), []byte("echo no worker >&2; exit 1\n"), 0o644))

	out, code := f.launch(t, script, []string{FailuresAllowedEnv + "=0"}, "/bin/sh", "-c", "echo ran mpirun")
	assert.Equal(t, 1, code, out)
	assert.Equal(t, "no worker\ntrainfn: told localhost the attempt ended: failed 0\n", out)
	assert.Equal(t, 0, w.ExitCode(t, 10*time.Second), "the Job has failed: %s", &w.Out)
}

// A wait that failed for want of workers runs nothing, and tries once to
// tell a worker of the failed attempt, not for 60 s.
func TestLaunchRunsNothingWhenTheWaitFails(t *testing.T) {
	f := newSSHFixture(t)
	script, dir := launchIn(t, f, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}}))
	require.NoError(t, os.WriteFile(filepath.Join(dir, WaitForWorkersKey), []byte("echo no worker >&2; exit 1\n"), 0o644))
	out, code := f.launch(t, script, nil, "/bin/sh", "-c", "echo ran mpirun")
	assert.Equal(t, 1, code)
	assert.Equal(t, "no worker\ntrainfn: no worker could be told that the launcher's attempt ended (failed 6): the workers run on until their Job is deleted\n", out)
}

// The wait's word that the workers are gone is the launcher's exit code,
// which fails a Job whose pods restart Never at once; from the command,
// that code is a failure like others.
func TestLaunchPassesOnTheWorkersGone(t *testing.T) {
	f := newSSHFixture(t)
	script, dir := launchIn(t, f, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}}))
	gone := strconv.Itoa(WorkersGoneExitCode)
	require.NoError(t, os.WriteFile(filepath.Join(dir, WaitForWorkersKey), []byte("exit "+gone+"\n"), 0o644))
	out, code := f.launch(t, script, nil, "/bin/sh", "-c", "echo ran mpirun")
	assert.Equal(t, WorkersGoneExitCode, code, out)
	assert.NotContains(t, out, "ran mpirun")

	require.NoError(t, os.WriteFile(filepath.Join(dir, WaitForWorkersKey), []byte("echo waited\n"), 0o644))
	// No worker to tell: the launcher ends as soon as its command does.
	out, code = f.launch(t, script, []string{WorkersEndEnv + "=false"}, "/bin/sh", "-c", "exit "+gone)
	assert.Equal(t, 1, code, out)
}

// Stopped by the kubelet, the launcher stops its command and tells no
// worker: its Job makes another attempt, which needs them.
func TestLaunchStoppedTellsNothing(t *testing.T) {
	f := newSSHFixture(t)
	script, dir := launchIn(t, f, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}}))
	// No sshd: a word would be tried 60 times, a second apart.
	cmd := exec.Command("/bin/sh", "-c", script, "launch.sh", "/bin/sh", "-c",
		"trap 'echo > "+dir+"/stopped; exit 143' TERM; echo > "+dir+"/started; sleep 60 >/dev/null 2>&1 & wait")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 143, exit.ExitCode(), "the command's own code")
	assert.FileExists(t, filepath.Join(dir, "stopped"), "the command was stopped, not waited for")
	assert.NotContains(t, out.String(), "trainfn: ", fmt.Sprint("no word: ", &out))
}

// The Job fails past backoffLimit failed pods, but at backoffLimit restarts
// of a container (pastBackoffLimitOnFailure in Kubernetes' Job controller).
func TestFailuresAllowed(t *testing.T) {
	for _, tt := range []struct {
		limit   int32
		restart string
		want    int32
	}{
		{6, "Never", 6}, {6, "OnFailure", 5}, {1, "OnFailure", 0}, {0, "OnFailure", 0}, {0, "Never", 0},
	} {
		assert.Equal(t, tt.want, FailuresAllowed(tt.limit, tt.restart), "backoffLimit %d, %s", tt.limit, tt.restart)
	}
}
