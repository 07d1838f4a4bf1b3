package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trainfn/trainfn/test/scrape"
)

// reconciler is a running trainfn-reconciler.
type reconciler struct {
	cmd     *exec.Cmd
	metrics string // its /metrics URL
	log     string
	exited  chan struct{}
	err     error // why it exited, once exited is closed
}

// startReconciler runs the reconciler as a deployment would, minus leader
// election and probes, and returns once it serves its metrics; its cache
// may still be syncing.
func (b *run) startReconciler(ctx context.Context, name string) (*reconciler, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return nil, err
	}
	logPath := filepath.Join(b.dir, "reconciler-"+name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	args := []string{
		"--leader-elect=false",
		"--metrics-bind-address", addr,
		"--health-probe-bind-address", "0",
		// The DI server as deployed, on a port of its own: two
		// reconcilers of a run never share one.
		"--di-server-bind-address", "127.0.0.1:0",
		// No progress reports in the bench: they would need a TLS Secret.
		"--progress-address", "0",
		"--coalesce", b.cfg.Coalesce.String(),
	}
	cmd := exec.Command(b.reconciler, append(args, "--kubeconfig", b.kube.Kubeconfig)...)
	if b.cfg.KubeconfigEnv {
		cmd = exec.Command(b.reconciler, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+b.kube.Kubeconfig)
	}
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, killed with the benchmark: no reconciler
	// outlives a run that panicked or was interrupted.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the reconciler: %w", err)
	}
	r := &reconciler{cmd: cmd, metrics: "http://" + addr + "/metrics", log: logPath, exited: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		close(r.exited)
	}()
	err = poll(ctx, "the reconciler's metrics", 30*time.Second, func(ctx context.Context) error {
		if err := r.failed(); err != nil {
			return err
		}
		_, err := r.scrape(ctx)
		return err
	})
	if err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

// failed says why the reconciler exited, if it did.
func (r *reconciler) failed() error {
	select {
	case <-r.exited:
		return fmt.Errorf("the reconciler exited (%v):\n%s", r.err, tail(r.log, 20))
	default:
		return nil
	}
}

// stop ends the reconciler as its Deployment would, with SIGTERM and a
// grace period beyond its own shutdown timeout.
func (r *reconciler) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.exited
	}
}

// scrape reads the reconciler's metrics.
func (r *reconciler) scrape(ctx context.Context) (metrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return scrape.Get(ctx, r.metrics)
}

// settle waits until the reconciler has stopped writing and requesting,
// for a second of scrapes, and returns its metrics then: a measurement
// ends only once the changes it made have no more effect.
func (r *reconciler) settle(ctx context.Context) (metrics, error) {
	const still = 4 // scrapes, 250ms apart
	var last metrics
	same := 0
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := r.scrape(ctx)
		if err != nil {
			return nil, err
		}
		if last != nil && m.Sum(requestsTotal) == last.Sum(requestsTotal) && m.Sum(writesTotal) == last.Sum(writesTotal) {
			same++
		} else {
			same = 0
		}
		last = m
		if same >= still || time.Now().After(deadline) {
			return m, nil
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// memory reads the reconciler's peak and current resident memory, in KiB,
// from the kernel: VmHWM and VmRSS.
func (r *reconciler) memory() (peak, current int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return procMemory(f)
}

func procMemory(status io.Reader) (peak, current int64, err error) {
	s := bufio.NewScanner(status)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok || (key != "VmHWM" && key != "VmRSS") {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmHWM" {
			peak = kib
		} else {
			current = kib
		}
	}
	if peak == 0 {
		return 0, 0, fmt.Errorf("no VmHWM in /proc/<pid>/status")
	}
	return peak, current, s.Err()
}

// tail is the end of a log file.
func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
