// Command render times whole trainfn processes run as a KRM function, the
// way kustomize, kpt and Argo CD pay for them, against the floor (see
// ../floor) measured in the same run on a ResourceList as large as
// trainfn's output, and checks the targets set for them.
//
// Usage: go run ./hack/bench/render -bin bin/trainfn -floor FLOOR [-runs 10]
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
)

func main() {
	if os.Getenv(spawnEnv) != "" {
		os.Exit(spawn(os.Args[1:]))
	}
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "bin/trainfn", "the trainfn binary to time")
	flag.StringVar(&cfg.floor, "floor", "", "the floor binary, built from hack/bench/floor")
	flag.IntVar(&cfg.runs, "runs", 10, "runs per case")
	flag.IntVar(&cfg.slowRuns, "slow-runs", 3, "runs per case for cases whose first run takes over -slow")
	flag.DurationVar(&cfg.slow, "slow", defaultSlow, "what a slow case's first run takes")
	only := flag.String("cases", "", "a regular expression: run only the cases it matches")
	flag.StringVar(&cfg.out, "out", ".cache/bench/render.json", "the results file, compared against when it exists")
	flag.Parse()
	var err error
	if cfg.only, err = regexp.Compile(*only); err != nil {
		fmt.Fprintln(os.Stderr, "bench: -cases:", err)
		os.Exit(2)
	}
	if cfg.floor == "" {
		fmt.Fprintln(os.Stderr, "bench: -floor is required")
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
