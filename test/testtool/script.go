package testtool

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Script is a shell script that runs as a container's command: the
// scripts trainfn renders around a container's command, run for real.
type Script struct {
	Cmd *exec.Cmd
	// Out is what it printed, stdout and stderr together, so far.
	Out    Output
	exited chan error
}

// Output collects what a process prints while a test reads it.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// StartScript runs script with /bin/sh -c, name as its $0 and args after
// it, in the test's environment plus env. It runs in a process group of
// its own, killed whole when the test ends, as the kubelet ends a
// container: a subshell the script forked would outlive the shell.
func StartScript(t testing.TB, env []string, script, name string, args ...string) *Script {
	t.Helper()
	s := &Script{exited: make(chan error, 1)}
	s.Cmd = exec.Command("/bin/sh", append([]string{"-c", script, name}, args...)...)
	s.Cmd.Env = append(os.Environ(), env...)
	s.Cmd.Stdout, s.Cmd.Stderr = &s.Out, &s.Out
	s.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, s.Cmd.Start())
	go func() { s.exited <- s.Cmd.Wait() }()
	t.Cleanup(func() { _ = syscall.Kill(-s.Cmd.Process.Pid, syscall.SIGKILL) })
	return s
}

// ExitCode waits for the script to end and is its exit code; -1 if it
// runs on for the time given.
func (s *Script) ExitCode(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case err := <-s.exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(within):
		return -1
	}
}
