// Package bench measures trainfn's reconciler the way it runs: the
// trainfn-reconciler binary as a process of its own, against a real
// control plane (package test/cluster) whose nodes kwok plays. Pods never
// run; a worker becoming ready or not is a patch of its pod's status, which
// is all the reconciler sees of a kubelet anyway.
//
// Three figures: how long a worker change takes to reach the discovery
// script, and how many API requests it costs, per job size; how many writes
// a burst of changes costs; and the reconciler's peak memory with and
// without thousands of pods it has no business caching.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/trainfn/trainfn/test/cluster"

	"github.com/trainfn/trainfn/hack/bench/internal/resultsfile"
)

// Config shapes a run.
type Config struct {
	// Mode names the shape of a run in its results: full, quick or custom.
	Mode string
	// Bin is the trainfn-reconciler binary; built from
	// ./cmd/trainfn-reconciler when empty.
	Bin string
	// Sizes are the workers of the jobs discovery is measured on.
	Sizes []int
	// Samples are the workers made not ready, then ready again, per size.
	Samples int
	// Unrelated pods, spread over UnrelatedNamespaces, are the load of the
	// memory figure; MemoryWorkers are the workers of the job the
	// reconciler handles meanwhile.
	Unrelated, UnrelatedNamespaces, MemoryWorkers int
	// Coalesce is the reconciler's --coalesce.
	Coalesce time.Duration
	// Gap is the pause after each one-at-a-time change. With --kubeconfig,
	// the reconciler's client-go clients keep to client-go's default of 5
	// requests a second per resource (burst 10): changes back to back, each
	// a ConfigMap write, would measure that limit, not the reconciler.
	Gap time.Duration
	// KubeconfigEnv hands the reconciler its kubeconfig in $KUBECONFIG
	// rather than --kubeconfig: controller-runtime then builds its client
	// as in a pod, without a client-side rate limit, as the Helm chart
	// runs it.
	KubeconfigEnv bool
	// Out is the results file; a previous one is compared against.
	Out string
	// Keep leaves the work folder (logs, the cluster's files) in place.
	Keep bool
}

// Full is the benchmark make bench runs.
func Full() Config {
	return Config{
		Mode:                "full",
		Sizes:               []int{10, 100, 1000},
		Samples:             20,
		Unrelated:           10000,
		UnrelatedNamespaces: 10,
		MemoryWorkers:       10,
		Coalesce:            100 * time.Millisecond,
		Gap:                 300 * time.Millisecond,
		Out:                 ".cache/bench/reconcile.json",
	}
}

// Quick shrinks a configuration to check the harness in a couple of minutes.
func Quick(c Config) Config {
	c.Mode = "quick"
	c.Sizes = []int{5, 20}
	c.Samples = 5
	c.Unrelated = 1000
	c.UnrelatedNamespaces = 4
	c.Out = ".cache/bench/reconcile-quick.json"
	return c
}

// podsPerNode is how many pods the benchmark puts on a fake node at most:
// below the 110 a node offers (test/cluster's nodeCapacity), since the
// scheduler spreads pods only roughly evenly.
const podsPerNode = 90

// Run runs the benchmark from the repository's root, prints its table to
// stdout and its progress to log, and writes the results file.
func Run(ctx context.Context, cfg Config, stdout, log io.Writer) (err error) {
	if cfg.Samples < 1 || len(cfg.Sizes) == 0 {
		return errors.New("nothing to measure: no sizes or no samples")
	}
	previous, err := resultsfile.Read[Results](cfg.Out)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "trainfn-reconcile-bench-")
	if err != nil {
		return err
	}
	b := &run{cfg: cfg, dir: dir, log: log, began: time.Now()}
	defer func() {
		if cfg.Keep || err != nil {
			b.progress("work folder kept: %s (cluster logs in cluster/, the reconciler's in reconciler-*.log)", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}()
	if b.reconciler, b.trainfn, err = binaries(ctx, cfg.Bin, dir); err != nil {
		return err
	}
	pods := 2 * (cfg.MemoryWorkers + 1)
	for _, n := range cfg.Sizes {
		pods += n + 1
	}
	nodes := max(3, (pods+podsPerNode-1)/podsPerNode)
	b.progress("starting a control plane with %d fake nodes", nodes)
	clusterDir := filepath.Join(dir, "cluster")
	if err := os.Mkdir(clusterDir, 0o755); err != nil {
		return err
	}
	c, err := cluster.Start(ctx, cluster.Options{Nodes: nodes, Dir: clusterDir})
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer c.Stop()
	defer func() {
		if err != nil {
			fmt.Fprintf(log, "the components' last words:\n%s", c.Logs(15))
		}
	}()
	if b.kube, err = newKube(c, b.trainfn, dir); err != nil {
		return err
	}
	res := &Results{
		Mode: cfg.Mode, Date: b.began.UTC(), Commit: commit(ctx), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), Coalesce: cfg.Coalesce.String(), Samples: cfg.Samples, Nodes: nodes,
		Gap: cfg.Gap.String(), Client: "--kubeconfig (the reconciler turns client-side throttling off)",
	}
	if cfg.KubeconfigEnv {
		res.Client = "$KUBECONFIG (controller-runtime's GetConfig: no client-side limit, as in a pod)"
	}
	// Memory first, on a cluster that holds nothing else: the discovery
	// jobs' pods are trainfn's, and the reconciler would rightly cache them.
	if res.Memory, err = b.memory(ctx); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	if res.Discovery, err = b.discovery(ctx); err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	res.Seconds = time.Since(b.began).Seconds()
	if err := resultsfile.Write(cfg.Out, res); err != nil {
		return err
	}
	printResults(stdout, res, previous, cfg.Out)
	return nil
}

// run is one benchmark run's state.
type run struct {
	cfg   Config
	dir   string
	kube  *kube
	log   io.Writer
	began time.Time

	// reconciler is the trainfn-reconciler binary measured; trainfn
	// renders the jobs.
	reconciler, trainfn string
}

func (b *run) progress(format string, args ...any) {
	fmt.Fprintf(b.log, "[%6.1fs] %s\n", time.Since(b.began).Seconds(), fmt.Sprintf(format, args...))
}

// binaries are the trainfn-reconciler binary to run, the one given or else
// one built now so that the benchmark never times a stale build, and
// trainfn, built now, which renders the jobs.
func binaries(ctx context.Context, given, dir string) (reconciler, trainfn string, err error) {
	reconciler, trainfn = filepath.Join(dir, "trainfn-reconciler"), filepath.Join(dir, "trainfn")
	packages := []string{"./cmd/trainfn", "./cmd/trainfn-reconciler"}
	if given != "" {
		if reconciler, err = filepath.Abs(given); err != nil {
			return "", "", err
		}
		packages = packages[:1]
	}
	// A folder given to -o, with its slash, takes each binary under its
	// package's name.
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(filepath.Separator)}, packages...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("building %s: %w\n%s", strings.Join(packages, " "), err, out)
	}
	return reconciler, trainfn, nil
}

// commit names the code measured, for a later comparison to show.
func commit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
