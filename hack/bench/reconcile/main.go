// Command reconcile benchmarks trainfn's reconciler on a real control plane
// with kwok's fake nodes: discovery latency and API requests per worker
// change at several job sizes, writes per burst of changes, and the
// reconciler's memory beside thousands of pods it does not own. See
// hack/bench/README.md.
//
// Usage: go run ./hack/bench/reconcile [-quick] [-sizes 10,100,1000] [-samples 20]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trainfn/trainfn/hack/bench/reconcile/internal/bench"
)

func main() {
	cfg := bench.Full()
	quick := flag.Bool("quick", false, "small sizes and few samples, to check the harness (about a minute)")
	sizes := flag.String("sizes", "", "workers per job, comma-separated (default 10,100,1000; -quick 5,20)")
	samples := flag.Int("samples", 0, "workers made not ready, then ready, one at a time, per size (default 20; -quick 5)")
	unrelated := flag.Int("unrelated", 0, "pods trainfn did not render, for the memory figure (default 10000; -quick 1000)")
	flag.DurationVar(&cfg.Coalesce, "coalesce", cfg.Coalesce, "the reconciler's --coalesce")
	flag.DurationVar(&cfg.Gap, "gap", cfg.Gap, "pause after each one-at-a-time change; 0 sends them back to back, into the reconciler's client rate limit")
	flag.BoolVar(&cfg.KubeconfigEnv, "kubeconfig-env", false, "give the reconciler $KUBECONFIG instead of --kubeconfig: no client-side rate limit, as in a pod")
	flag.StringVar(&cfg.Bin, "bin", "", "trainfn-reconciler binary to run; built from ./cmd/trainfn-reconciler when empty")
	out := flag.String("out", "", "results file, compared against when it exists (default .cache/bench/reconcile.json; -quick reconcile-quick.json)")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the work folder (cluster and reconciler logs) and print its path")
	timeout := flag.Duration("timeout", 20*time.Minute, "give up after this long")
	flag.Parse()
	if *quick {
		cfg = bench.Quick(cfg)
	}
	if *sizes != "" {
		cfg.Sizes = nil
		for s := range strings.SplitSeq(*sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "reconcile bench: -sizes: %q is not a worker count\n", s)
				os.Exit(2)
			}
			cfg.Sizes = append(cfg.Sizes, n)
		}
		// Other sizes are another benchmark: keep their results apart.
		cfg.Mode, cfg.Out = "custom", ".cache/bench/reconcile-custom.json"
	}
	if *samples > 0 {
		cfg.Samples = *samples
	}
	if *unrelated > 0 {
		cfg.Unrelated = *unrelated
	}
	if cfg.KubeconfigEnv && *out == "" {
		cfg.Out = strings.TrimSuffix(cfg.Out, ".json") + "-kubeconfig-env.json"
	}
	if *out != "" {
		cfg.Out = *out
	}
	if err := run(cfg, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "reconcile bench:", err)
		os.Exit(1)
	}
}

// run runs the benchmark until it ends, is interrupted or times out.
func run(cfg bench.Config, timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return bench.Run(ctx, cfg, os.Stdout, os.Stderr)
}
