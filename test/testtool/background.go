package testtool

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Background is a command started and not yet waited for: a `status -w`
// or a `wait` run beside the job it follows.
type Background struct {
	cmd            *exec.Cmd
	Stdout, Stderr *Buffer
	done           chan struct{}
}

// Ended is how a command ended.
type Ended struct {
	Code           int
	Stdout, Stderr string
}

// Start starts a command; it is killed when the test ends, if it has not
// ended by then.
func Start(t *testing.T, name string, args ...string) *Background {
	t.Helper()
	b := &Background{cmd: exec.Command(name, args...), Stdout: &Buffer{}, Stderr: &Buffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.Stdout, b.Stderr
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	// How it ended is read from its ProcessState.
	go func() { _ = b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() { _ = b.cmd.Process.Kill() })
	return b
}

// Wait waits for the command to end by itself, failing the test if it has
// not within the time given.
func (b *Background) Wait(t *testing.T, within time.Duration) Ended {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(within):
		t.Fatalf("%s did not end within %s; it wrote:\n%s", strings.Join(b.cmd.Args, " "), within, b.Stderr.String())
	}
	return Ended{Code: b.cmd.ProcessState.ExitCode(), Stdout: b.Stdout.String(), Stderr: b.Stderr.String()}
}

// Interrupt stops the command as a user's ^C does, and says how it ended.
func (b *Background) Interrupt(t *testing.T) Ended {
	t.Helper()
	select {
	case <-b.done:
		// It ended by itself: how is the test's to judge.
	default:
		if err := b.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatalf("interrupting %s: %v", b.cmd.Args[0], err)
		}
	}
	return b.Wait(t, time.Minute)
}
