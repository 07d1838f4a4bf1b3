//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

var (
	// kube is the control plane every test shares, each in namespaces of
	// its own.
	kube *cluster.Cluster
	// trainfn renders the jobs and trainfnReconciler runs the reconciler:
	// the binaries under test, built once.
	trainfn, trainfnReconciler string
)

// fakeNodes hold every test's pods at once, several jobs of a few workers
// each, with room to spare when a test scales past a job's maximum.
const fakeNodes = 4

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The GitOps syncs' controller-runtime clients log through its global
	// logger: without one, they print a stack trace into the output.
	ctrllog.SetLogger(logr.Discard())
	if _, err := cluster.Binary("kube-apiserver"); err != nil && os.Getenv(testtool.RequireEnv) == "" {
		fmt.Fprintln(os.Stderr, "reconcile: skipped:", err)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	// Pods take loopback addresses, so that a test can call the DI server
	// from a DIJob pod's own address, which the server requires.
	if kube, err = cluster.Start(ctx, cluster.Options{Nodes: fakeNodes, PodCIDR: "127.43.0.0/16"}); err != nil {
		fmt.Fprintln(os.Stderr, "reconcile: starting the control plane:", err)
		return 1
	}
	defer kube.Stop()
	code := testtool.RunWithCommands(m, map[string]*string{"trainfn": &trainfn, "trainfn-reconciler": &trainfnReconciler})
	if code != 0 {
		fmt.Fprintf(os.Stderr, "reconcile: the components' last words:\n%s", kube.Logs(20))
	}
	return code
}
