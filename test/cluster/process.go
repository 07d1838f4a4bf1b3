package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// process is one running component, its output kept in a log file so that
// a failing test can show what the component said.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error // set once exited is closed
}

// start runs a component in its own process group. Unless detached, the
// kernel kills it if the test binary dies before Stop (a panic or a go test
// timeout), so no etcd or API server outlives its test run; a detached
// component has a session of its own and a pid file, name.pid in dir, for
// Kill.
func start(dir, name, binary string, detach bool, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if detach {
		pid := []byte(strconv.Itoa(cmd.Process.Pid) + "\n")
		if err := os.WriteFile(filepath.Join(dir, name+".pid"), pid, 0o644); err != nil {
			_ = cmd.Process.Kill()
			return nil, err
		}
	}
	p := &process{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// StartDetached starts a component that outlives this process, with a pid
// file in dir for Kill, as Options.Detach starts the cluster's own: a
// component of a cluster that another process started.
func StartDetached(dir, name, binary string, args ...string) error {
	_, err := start(dir, name, binary, true, args...)
	return err
}

// failed reports, without blocking, why the process has already ended.
func (p *process) failed() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v):\n%s", p.name, p.err, p.tail(40))
	default:
		return nil
	}
}

// stop asks the process group to end, and kills it if it does not within
// the grace period; with none, it kills it at once.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	pgid := -p.cmd.Process.Pid
	if grace <= 0 {
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.exited
		return
	}
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.exited
	}
}

// Kill ends the detached components whose pid files are in dir, the
// newest first, each given the grace period to end before it is killed,
// or killed at once, as a machine's crash would end it, when the grace is
// not positive; only those named, if names are given. A pid file whose
// process has already ended is removed as well.
func Kill(dir string, grace time.Duration, names ...string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.pid"))
	if err != nil {
		return err
	}
	if len(names) > 0 {
		files = slices.DeleteFunc(files, func(f string) bool {
			return !slices.Contains(names, strings.TrimSuffix(filepath.Base(f), ".pid"))
		})
	}
	modified := func(path string) time.Time {
		info, err := os.Stat(path)
		if err != nil {
			return time.Time{}
		}
		return info.ModTime()
	}
	slices.SortFunc(files, func(a, b string) int { return modified(b).Compare(modified(a)) })
	var errs []error
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 1 {
			errs = append(errs, fmt.Errorf("%s: not a process id", file))
			continue
		}
		// The component leads its session's process group.
		if grace <= 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		} else if syscall.Kill(-pid, syscall.SIGTERM) == nil {
			_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, grace, true, func(context.Context) (bool, error) {
				return syscall.Kill(pid, 0) != nil, nil
			})
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		errs = append(errs, os.Remove(file))
	}
	return errors.Join(errs...)
}

// tail is the end of the process's log.
func (p *process) tail(lines int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// Wait polls check until it succeeds, a component ends, the timeout
// passes or ctx is done; the error says which, with check's last complaint.
func (c *Cluster) Wait(ctx context.Context, what string, timeout time.Duration, check func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if last = check(ctx); last == nil {
			return true, nil
		}
		for _, p := range c.procs {
			if failure := p.failed(); failure != nil {
				return false, failure
			}
		}
		return false, nil
	})
	if err != nil && wait.Interrupted(err) {
		return errors.Join(fmt.Errorf("%s not ready after %s", what, timeout), last)
	}
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}
