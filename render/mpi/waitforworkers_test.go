package mpi

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/sshtest"
)

// The wait script runs here against a real sshd on loopback, with the real
// ssh client, as the launcher's init container runs it against the workers.
// Two things differ from a pod: the hostfile is a temporary file instead of
// /etc/mpi/hostfile, and the port and key reach ssh through
// OMPI_MCA_plm_rsh_args, the way a user's extra ssh arguments do.

type sshFixture struct {
	dir  string
	port string
	sshd *sshtest.Server
	env  []string
	// impl is the job's MPI implementation: OpenMPI unless a test says.
	impl Implementation
}

func newSSHFixture(t *testing.T) *sshFixture {
	dir := t.TempDir()
	port := freePort(t)
	sshd := sshtest.New(t, dir, "127.0.0.1", port)
	return &sshFixture{dir: dir, port: port, sshd: sshd, impl: OpenMPI, env: []string{
		"OMPI_MCA_plm_rsh_args=-p " + port + " -i " + sshd.Identity,
	}}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// startSSHDAfter starts the worker's sshd in the foreground after a delay,
// as a worker pod that is still pulling its image would; it runs until the
// test ends. The returned channel reports the start.
func (f *sshFixture) startSSHDAfter(t *testing.T, delay time.Duration) <-chan error {
	cmd := exec.Command(f.sshd.SSHD, "-D", "-e", "-f", f.sshd.Config)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	started := make(chan error, 1)
	go func() {
		time.Sleep(delay)
		started <- cmd.Start()
	}()
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Log("sshd:", log.String())
		}
	})
	return started
}

// wait runs the script over a hostfile, with a timeout unless it is
// negative; the context only keeps a broken script from hanging the test.
func (f *sshFixture) wait(t *testing.T, hostfile string, timeoutSeconds int, args ...string) (stdout, stderr string, err error) {
	path := filepath.Join(f.dir, "hostfile")
	require.NoError(t, os.WriteFile(path, []byte(hostfile), 0o644))
	script := strings.ReplaceAll(WaitForWorkers(f.impl), ConfigDir+"/"+HostfileKey, path)
	require.NotEqual(t, WaitForWorkers(f.impl), script, "the script reads the hostfile from its mount")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, "wait-for-workers.sh"}, args...)...)
	cmd.Env = os.Environ()
	if timeoutSeconds >= 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", WaitTimeoutEnv, timeoutSeconds))
	}
	cmd.Env = append(cmd.Env, f.env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func TestWaitForWorkersWaitsForALateWorker(t *testing.T) {
	f := newSSHFixture(t)
	started := f.startSSHDAfter(t, 3*time.Second)
	stdout, stderr, err := f.wait(t, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}, {Name: "127.0.0.1", Slots: 1}}), 120)
	require.NoError(t, <-started)
	require.NoError(t, err, "stdout: %s\nstderr: %s", stdout, stderr)
	// Both are probed at once, so either may be named first.
	assert.Regexp(t, `trainfn: waiting for (localhost|127\.0\.0\.1) and 1 more \(\d+s\): .*Connection refused`, stdout)
	assert.Contains(t, stdout, "trainfn: localhost accepts SSH")
	assert.Contains(t, stdout, "trainfn: 127.0.0.1 accepts SSH")
}

// The wait reaches the workers through the ssh arguments mpirun will use:
// those the render found on mpirun's command line, or else the first of
// the implementation's variables that is set. A variable of lower rank,
// or one the implementation does not read, points at a port where nothing
// listens, and must not be the one used.
func TestWaitForWorkersUsesMpirunsSSHArguments(t *testing.T) {
	f := newSSHFixture(t)
	require.NoError(t, <-f.startSSHDAfter(t, 0))
	f.listening(t)
	good := "-p " + f.port + " -i " + f.sshd.Identity
	bad := "-p 1 -i " + f.sshd.Identity
	for _, impl := range []Implementation{OpenMPI, Intel, MPICH} {
		sources := append([]string{WaitSSHArgsEnv}, SSHArgsVars(impl)...)
		for i, source := range sources {
			t.Run(string(impl)+"/"+source, func(t *testing.T) {
				f.impl = impl
				f.env = []string{source + "=" + good}
				for _, lower := range sources[i+1:] {
					f.env = append(f.env, lower+"="+bad)
				}
				for _, other := range AllSSHArgsVars() {
					if !slices.Contains(sources, other) {
						f.env = append(f.env, other+"="+bad)
					}
				}
				stdout, stderr, err := f.wait(t, Hostfile(impl, []handoff.Host{{Name: "localhost", Slots: 1}}), 5)
				require.NoError(t, err, "env: %v\nstdout: %s\nstderr: %s", f.env, stdout, stderr)
				assert.Equal(t, "trainfn: localhost accepts SSH\n", stdout)
			})
		}
	}
}

func TestWaitForWorkersGivesUpWithTheReason(t *testing.T) {
	f := newSSHFixture(t)
	stdout, stderr, err := f.wait(t, Hostfile(Intel, []handoff.Host{{Name: "localhost", Slots: 2}}), 3)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stdout: %s", stdout)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stderr, "trainfn: worker localhost did not accept SSH within 3s:")
	assert.Contains(t, stderr, "Connection refused", "the last ssh error says why")
}

// listening waits until sshd accepts connections: it listens a moment
// after it starts, and a slow machine makes the moment long.
func (f *sshFixture) listening(t *testing.T) {
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+f.port, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "sshd does not listen")
}

func TestWaitForWorkersSkipsTheLauncher(t *testing.T) {
	f := newSSHFixture(t)
	require.NoError(t, <-f.startSSHDAfter(t, 0))
	// Without a wait, the script's first try could be refused, and say so.
	f.listening(t)
	self, err := os.ReadFile("/etc/hostname")
	if err != nil {
		self, err = exec.Command("hostname").Output()
		require.NoError(t, err)
	}
	// The launcher, which runs no sshd, heads the hostfile when it also
	// works; it is passed over, the worker after it is not.
	launcher := strings.Split(strings.TrimSpace(string(self)), ".")[0] + ".job"
	stdout, stderr, err := f.wait(t, Hostfile(OpenMPI, []handoff.Host{{Name: launcher, Slots: 1}, {Name: "localhost", Slots: 1}}), 10)
	require.NoError(t, err, "stdout: %s\nstderr: %s", stdout, stderr)
	assert.Equal(t, "trainfn: localhost accepts SSH\n", stdout)
}

func TestWaitForWorkersRefusesABadTimeout(t *testing.T) {
	f := newSSHFixture(t)
	f.env = append(f.env, WaitTimeoutEnv+"=10m")
	_, stderr, err := f.wait(t, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}}), -1)
	require.Error(t, err)
	assert.Contains(t, stderr, `trainfn: TRAINFN_WAIT_TIMEOUT_SECONDS must be a number of seconds, not "10m"`)
}

func TestWaitForWorkersWithoutSSH(t *testing.T) {
	f := newSSHFixture(t)
	// A PATH with what the script needs but ssh, as in an image without it.
	bin := t.TempDir()
	for _, tool := range []string{"cat", "date", "sleep", "hostname"} {
		if p, err := exec.LookPath(tool); err == nil {
			require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
		}
	}
	f.env = append(f.env, "PATH="+bin)
	_, stderr, err := f.wait(t, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}}), 600)
	require.Error(t, err)
	assert.Contains(t, stderr, "trainfn: the launcher's image has no ssh")
}

func TestWaitForWorkersRefusesABadParallelism(t *testing.T) {
	f := newSSHFixture(t)
	for _, bad := range []string{"0", "many", "-1"} {
		f.env = []string{WaitParallelEnv + "=" + bad}
		_, stderr, err := f.wait(t, Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}}), 10)
		require.Error(t, err, bad)
		assert.Contains(t, stderr, `trainfn: TRAINFN_WAIT_PARALLEL must be a number of workers, at least 1, not "`+bad+`"`)
	}
}

// standInSSH puts an ssh on PATH that takes a moment, records each call's
// host in dir/calls and how many calls it saw running (dir/seen.PID), and
// succeeds for every host but those listed in dir/down, each of which
// refuses its first probe and comes up then.
func standInSSH(t *testing.T, f *sshFixture) string {
	bin, state := t.TempDir(), t.TempDir()
	// The probe ends with: HOST true.
	script := `#!/bin/sh
host=
for a; do [ "$a" = true ] && break; host=$a; done
echo "$host" >> ` + state + `/calls
mkdir -p ` + state + `/running
touch ` + state + `/running/$$
sleep 0.3
set -- ` + state + `/running/*
echo $# > ` + state + `/seen.$$
rm ` + state + `/running/$$
if grep -qx "$host" ` + state + `/down 2>/dev/null; then
  grep -vx "$host" ` + state + `/down > ` + state + `/down.$$
  mv ` + state + `/down.$$ ` + state + `/down
  echo "ssh: connect to host $host port 22: Connection refused" >&2
  exit 255
fi
`
	require.NoError(t, os.WriteFile(filepath.Join(bin, "ssh"), []byte(script), 0o755))
	f.env = append(f.env, "PATH="+bin+":"+os.Getenv("PATH"))
	return state
}

// mostSeen is the most probes a stand-in ssh saw running at once.
func mostSeen(t *testing.T, state string) int {
	seen, err := filepath.Glob(filepath.Join(state, "seen.*"))
	require.NoError(t, err)
	most := 0
	for _, p := range seen {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		most = max(most, n)
	}
	return most
}

// Workers are probed many at a time, never more than the bound; a worker
// that answers is not asked again while a late one is.
func TestWaitForWorkersProbesInParallelRounds(t *testing.T) {
	f := newSSHFixture(t)
	state := standInSSH(t, f)
	f.env = append(f.env, WaitParallelEnv+"=4")
	var hosts []handoff.Host
	for i := range 12 {
		hosts = append(hosts, handoff.Host{Name: fmt.Sprintf("worker-%d.job", i), Slots: 1})
	}
	// worker-7 refuses its first probe, and comes up then.
	require.NoError(t, os.WriteFile(filepath.Join(state, "down"), []byte("worker-7.job\n"), 0o644))
	stdout, stderr, err := f.wait(t, Hostfile(OpenMPI, hosts), 60)
	require.NoError(t, err, "stdout: %s\nstderr: %s", stdout, stderr)
	for _, h := range hosts {
		assert.Contains(t, stdout, "trainfn: "+h.Name+" accepts SSH\n")
	}
	assert.Regexp(t, `trainfn: waiting for worker-7\.job \(\d+s\): ssh: connect to host worker-7\.job port 22: Connection refused`, stdout)

	most := mostSeen(t, state)
	assert.LessOrEqual(t, most, 4, "no more than 4 probes run at once")
	assert.GreaterOrEqual(t, most, 2, "probes run side by side")
	calls, err := os.ReadFile(filepath.Join(state, "calls"))
	require.NoError(t, err)
	perHost := map[string]int{}
	for _, h := range strings.Fields(string(calls)) {
		perHost[h]++
	}
	assert.Equal(t, 2, perHost["worker-7.job"], "the late worker is probed again")
	delete(perHost, "worker-7.job")
	for h, n := range perHost {
		assert.Equal(t, 1, n, "%s answered at once and is asked no more", h)
	}
}

// Until a worker resolves, the workers wait for room (a queue, a gang
// scheduler), not for a stall: the wait's bound does not run yet.
func TestWaitForWorkersStallStartsWhenAWorkerResolves(t *testing.T) {
	f := newSSHFixture(t)
	path := filepath.Join(f.dir, "hostfile")
	require.NoError(t, os.WriteFile(path, []byte(Hostfile(OpenMPI, []handoff.Host{{Name: "queued.invalid", Slots: 1}})), 0o644))
	script := strings.ReplaceAll(WaitForWorkers(f.impl), ConfigDir+"/"+HostfileKey, path)
	// Long enough for several rounds past the 1 second bound; a resolver
	// that cannot reach its server gives up after a second.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = append(append(os.Environ(), f.env...), WaitTimeoutEnv+"=1", "RES_OPTIONS=timeout:1 attempts:1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "the wait ended by itself: %s", out)
	assert.Contains(t, string(out), "trainfn: waiting for queued.invalid to be placed (no worker resolves yet): ssh: Could not resolve hostname queued.invalid")
	assert.NotContains(t, string(out), "did not accept SSH within")

	// A worker that resolves but refuses starts the bound.
	stdout, stderr, err := f.wait(t, Hostfile(OpenMPI, []handoff.Host{{Name: "queued.invalid", Slots: 1}, {Name: "localhost", Slots: 1}}), 1)
	require.Error(t, err, "stdout: %s", stdout)
	assert.Contains(t, stderr, "did not accept SSH within 1s")
}

// Workers an earlier attempt of the launcher's pod found placed, that no
// longer resolve, are gone (their Job failed, or was deleted), not
// waiting for room: the attempt gives up after the bound, saying so,
// where it used to wait for them forever.
func TestWaitForWorkersGivesUpOnWorkersGone(t *testing.T) {
	f := newSSHFixture(t)
	mark := filepath.Join(t.TempDir(), placedMark)
	run := func(hosts []handoff.Host, within time.Duration) (string, error, error) {
		path := filepath.Join(f.dir, "hostfile")
		require.NoError(t, os.WriteFile(path, []byte(Hostfile(OpenMPI, hosts)), 0o644))
		script := strings.ReplaceAll(WaitForWorkers(f.impl), ConfigDir+"/"+HostfileKey, path)
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script, WaitForWorkersKey, mark)
		cmd.Env = append(append(os.Environ(), f.env...), WaitTimeoutEnv+"=1", "RES_OPTIONS=timeout:1 attempts:1")
		out, err := cmd.CombinedOutput()
		return string(out), err, ctx.Err()
	}
	gone := []handoff.Host{{Name: "gone.invalid", Slots: 1}}

	// No attempt has found them yet: the workers may wait for room.
	out, err, late := run(gone, 6*time.Second)
	require.Error(t, err)
	require.ErrorIs(t, late, context.DeadlineExceeded, "the wait ended by itself: %s", out)
	assert.NoFileExists(t, mark, "no worker resolved")

	// An attempt finds a worker placed (it resolves, and refuses), and
	// gives up on it; the mark stays for the attempts after it.
	out, err, _ = run([]handoff.Host{{Name: "localhost", Slots: 1}}, time.Minute)
	require.Error(t, err, out)
	assert.Contains(t, out, "trainfn: worker localhost did not accept SSH within 1s")
	require.FileExists(t, mark)

	// The next attempt finds none: they are gone, and it ends.
	out, err, late = run(gone, time.Minute)
	require.NoError(t, late, "the wait for workers gone never ended: %s", out)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, out)
	assert.Equal(t, WorkersGoneExitCode, exit.ExitCode(), "the workers gone have a code of their own")
	assert.Contains(t, out, "trainfn: an earlier attempt found the workers placed: this one waits 1s at most without a worker answering")
	assert.Contains(t, out, "trainfn: no worker is placed now (gone.invalid: ssh: Could not resolve hostname gone.invalid")
	assert.Contains(t, out, "and none has answered for 1s: their pods are gone, as when the workers' Job has failed or was deleted")
}

// Workers a gang scheduler placed with the launcher wait for no room
// either: when none resolves, the wait gives up after the bound, where
// without a gang it would wait for them as for room (the test above).
func TestWaitForWorkersPlacedTogetherGivesUp(t *testing.T) {
	f := newSSHFixture(t)
	path := filepath.Join(f.dir, "hostfile")
	require.NoError(t, os.WriteFile(path, []byte(Hostfile(OpenMPI, []handoff.Host{{Name: "gone.invalid", Slots: 1}})), 0o644))
	script := strings.ReplaceAll(WaitForWorkers(f.impl), ConfigDir+"/"+HostfileKey, path)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	cmd.Env = append(append(os.Environ(), f.env...), WaitTimeoutEnv+"=1", PlacedTogetherEnv+"=true", "RES_OPTIONS=timeout:1 attempts:1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the wait for workers placed with the launcher never ended: %s", out)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, WorkersGoneExitCode, exit.ExitCode())
	assert.Contains(t, string(out), "trainfn: the gang scheduler placed the workers with the launcher: the wait gives up after 1s without a worker answering")
	assert.Contains(t, string(out), "and none has answered for 1s: their pods are gone, as when the workers' Job has failed or was deleted")
}

// TestWaitForWorkersTakesADeadAddressForGone: a worker whose pod is gone
// may still resolve for a while, to an address nothing answers at; when
// the bound runs out on such workers, they are gone (exit
// WorkersGoneExitCode), not slow. A worker that refuses the connection is
// there, and the wait fails as on any stall. The dead address is ssh's
// own message from a stand-in ssh: no address here times out or has no
// route, since this machine refuses a connection to any it does not have.
func TestWaitForWorkersTakesADeadAddressForGone(t *testing.T) {
	for said, gone := range map[string]bool{
		"ssh: connect to host pi-worker-0.pi port 2222: Connection timed out": true,
		"ssh: connect to host pi-worker-0.pi port 2222: No route to host":     true,
		"ssh: connect to host pi-worker-0.pi port 2222: Connection refused":   false,
	} {
		f := newSSHFixture(t)
		bin := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(bin, "ssh"), []byte("#!/bin/sh\necho '"+said+"' >&2\nexit 255\n"), 0o755))
		f.env = append(f.env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), PlacedTogetherEnv+"=true")
		_, stderr, err := f.wait(t, Hostfile(OpenMPI, []handoff.Host{{Name: "pi-worker-0.pi", Slots: 1}}), 1)
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, said)
		if gone {
			assert.Equal(t, WorkersGoneExitCode, exit.ExitCode(), said)
			assert.Contains(t, stderr, "their pods are gone", said)
		} else {
			assert.Equal(t, 1, exit.ExitCode(), said)
			assert.Contains(t, stderr, "did not accept SSH within 1s", said)
		}
	}
}

// Probed once, as the launcher does after its command failed, the workers
// answer or not at once: the probe does not wait out a worker that is not
// there, however long the stall timeout, and passes when all answer.
func TestWaitForWorkersOnceProbesOnce(t *testing.T) {
	f := newSSHFixture(t)
	hosts := Hostfile(OpenMPI, []handoff.Host{{Name: "localhost", Slots: 1}})
	began := time.Now()
	stdout, _, err := f.wait(t, hosts, 600, "", "once")
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "no sshd yet: %s", stdout)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stdout, "trainfn: localhost did not accept SSH: ")
	assert.Less(t, time.Since(began), time.Minute, "it waited for the worker")

	require.NoError(t, <-f.startSSHDAfter(t, 0))
	f.listening(t)
	stdout, _, err = f.wait(t, hosts, 600, "", "once")
	require.NoError(t, err, stdout)
	assert.Equal(t, "trainfn: localhost accepts SSH\n", stdout)
}
