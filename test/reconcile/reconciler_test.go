//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/scrape"
	"github.com/trainfn/trainfn/test/testtool"
)

// replica is one trainfn-reconciler process, run as its Deployment runs
// it, signed in as the chart's ServiceAccount (installFor).
type replica struct {
	cmd             *exec.Cmd
	stderr          *testtool.Buffer
	metrics, probes string // loopback addresses
	diServer        string
	progress        string
	exited          chan struct{}
	err             error // set once exited is closed
}

// startReconciler runs a reconciler that watches ns, and elects its leader
// there, with extra flags; it returns once the reconciler's cache has
// synced. The test's end stops it, shows what it logged if the test failed,
// and checks that it never logged key material.
func startReconciler(t *testing.T, ns string, flags ...string) *replica {
	t.Helper()
	return startReconcilerAs(t, installFor(t, ns), ns, flags...)
}

// startReconcilerAs is startReconciler signed in as the ServiceAccount of
// a chart installed as in.
func startReconcilerAs(t *testing.T, in *cluster.ReconcilerInstall, ns string, flags ...string) *replica {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r := launchReconciler(t, in, ns, flags...)
		// A port freePorts found free can be taken, by another process's
		// outgoing connection, before the reconciler binds it: then the
		// reconciler is started again, on other ports.
		taken := false
		eventually(t, "the reconciler's cache synced", func(ctx context.Context) error {
			select {
			case <-r.exited:
				if attempt < 3 && strings.Contains(r.stderr.String(), "address already in use") {
					taken = true
					return nil
				}
				return giveUp(fmt.Errorf("trainfn-reconciler exited (%v):\n%s", r.err, r.stderr.String()))
			default:
			}
			return httpOK(ctx, "http://"+r.probes+"/readyz")
		})
		if !taken {
			return r
		}
		t.Logf("reconciler %d found a port taken; starting another:\n%s", r.cmd.Process.Pid, r.stderr.String())
	}
}

// launchReconciler starts a reconciler on free loopback ports.
func launchReconciler(t *testing.T, in *cluster.ReconcilerInstall, ns string, flags ...string) *replica {
	t.Helper()
	ports := freePorts(t, 4)
	r := &replica{
		stderr:   &testtool.Buffer{},
		metrics:  "127.0.0.1:" + ports[0],
		probes:   "127.0.0.1:" + ports[1],
		diServer: "127.0.0.1:" + ports[2],
		progress: "127.0.0.1:" + ports[3],
		exited:   make(chan struct{}),
	}
	args := append([]string{
		"--kubeconfig", in.Kubeconfig,
		"--namespaces", ns,
		"--leader-election-namespace", in.Namespace,
		"--leader-election-id", in.Arg("leader-election-id"),
		"--metrics-bind-address", r.metrics,
		"--health-probe-bind-address", r.probes,
		"--di-server-bind-address", r.diServer,
		"--coalesce", "50ms",
	}, progressFlags(in, r.progress)...)
	args = append(args, flags...)
	r.cmd = exec.Command(trainfnReconciler, args...)
	r.cmd.Stderr = r.stderr
	// No reconciler outlives the test binary, however that ends.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("starting trainfn-reconciler: %v", err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("reconciler %d logged:\n%s", r.cmd.Process.Pid, r.stderr.String())
		}
		if strings.Contains(r.stderr.String(), "PRIVATE KEY") {
			t.Errorf("reconciler %d logged key material", r.cmd.Process.Pid)
		}
	})
	return r
}

// progressFlags serve the progress API on address, with the chart's TLS
// Secret and names, or not at all when the chart turns it off.
func progressFlags(in *cluster.ReconcilerInstall, address string) []string {
	if in.Arg("progress-address") == "0" {
		return []string{"--progress-address=0"}
	}
	return []string{
		"--progress-address", address,
		"--progress-tls-secret", in.Arg("progress-tls-secret"),
		"--progress-tls-secret-namespace", in.Arg("progress-tls-secret-namespace"),
		"--progress-dns-names", in.Arg("progress-dns-names"),
	}
}

// stop ends the reconciler as Kubernetes ends a pod: SIGTERM, then SIGKILL
// once the grace period is over.
func (r *replica) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		r.kill()
	}
}

// kill ends the reconciler at once, as a crash or an evicted node would:
// it neither finishes its reconciles nor releases its lease.
func (r *replica) kill() {
	_ = r.cmd.Process.Kill()
	<-r.exited
}

// metric sums the samples of a metric the reconciler serves whose labels
// have the given values, as name, value pairs.
func (r *replica) metric(ctx context.Context, name string, labels ...string) (float64, error) {
	samples, err := scrape.Get(ctx, "http://"+r.metrics+"/metrics")
	if err != nil {
		return 0, err
	}
	return samples.Sum(name, labels...), nil
}

// writes is how many writes the reconciler has made to the API server.
func (r *replica) writes(t *testing.T) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := r.metric(ctx, "trainfn_writes_total")
	if err != nil {
		t.Fatalf("reading the metrics of reconciler %d: %v", r.cmd.Process.Pid, err)
	}
	return n
}

func httpOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// freePorts are loopback ports nobody listens on, held together so that
// they differ.
func freePorts(t testing.TB, n int) []string {
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close() //nolint:gocritic // deferInLoop: every port stays held until all are found
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports
}
