//go:build e2e

package onnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/trainfn/trainfn/test/node"
	"github.com/trainfn/trainfn/test/testtool"
)

var (
	// kube is the node every test shares, each in a namespace of its own.
	kube *node.Node
	// trainfn is the binary under test, built for the suite.
	trainfn string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if reason := unavailable(); reason != "" {
		if os.Getenv(testtool.RequireEnv) != "" {
			fmt.Fprintln(os.Stderr, "onnode:", reason)
			return 1
		}
		fmt.Fprintln(os.Stderr, "onnode: skipped:", reason)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	began := time.Now()
	cache := filepath.Join(repoRoot(), ".cache", "node")
	var err error
	// A cluster that make node left running is used as it is; else one of
	// TRAINFN_NODES nodes (one by default) is started.
	nodes, err := nodeCount()
	if err != nil {
		fmt.Fprintln(os.Stderr, "onnode:", err)
		return 1
	}
	if kube, err = node.Connect(ctx, cache); err != nil {
		kube, err = node.Start(ctx, node.Options{Cache: cache, Kueue: true, Nodes: nodes})
		testtool.RecordPhase("node start", time.Since(began), err != nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "onnode: starting the node:", err)
			return 1
		}
	}
	defer kube.Stop()
	helm, ok := testtool.Built("helm")
	if !ok {
		fmt.Fprintln(os.Stderr, "onnode: helm is not built: run hack/tools.sh")
		return 1
	}
	// The chart's defaults, its roles and admission policies with them,
	// and DIJobs on, as their users turn them on; without the allocator,
	// which rebalances preemptible DIJobs every period, a DIJob's worker
	// count is what the DI server API makes it: TestDIJobCallsTheDIServer
	// reads each count it asked for. The progress server on, as users of
	// progress reporting turn it on.
	if err = kube.InstallReconciler(ctx, helm, repoRoot(), "diJobs.enabled=true", "allocator.enabled=false", "progress.enabled=true"); err != nil {
		fmt.Fprintln(os.Stderr, "onnode: installing the reconciler:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "onnode: node and reconciler up in %s\n", time.Since(began).Round(time.Millisecond))
	code := testtool.RunWithTrainfn(m, &trainfn)
	if code != 0 {
		fmt.Fprintf(os.Stderr, "onnode: the components' last words:\n%s", kube.Logs(20))
	}
	return code
}

// NodesEnv is how many nodes the suite's cluster has; make e2e runs the
// tests that need two on a cluster of two, and the others on one.
const NodesEnv = "TRAINFN_NODES"

func nodeCount() (int, error) {
	value := os.Getenv(NodesEnv)
	if value == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: a number of nodes, 1 or more", NodesEnv, value)
	}
	return n, nil
}

// unavailable says why the node cannot run here, if it cannot.
func unavailable() string {
	if os.Geteuid() != 0 {
		return "the node needs root"
	}
	if _, err := os.Stat(filepath.Join(repoRoot(), ".cache", "node", "images")); err != nil {
		return "the node's images are not built: run make node-tools"
	}
	return ""
}

// repoRoot is the repository this file is in.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
