//go:build e2e

package diserver

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// podCIDR is where the fake pods' addresses are: addresses of this
// machine, which the test sends requests from as the pods that hold them.
const podCIDR = "127.42.0.0/16"

var (
	// kube is the control plane every test shares, each in namespaces of
	// its own.
	kube *cluster.Cluster
	// live reads from and writes to the API server.
	live client.Client
	// cached reads trainfn's objects from informers, filtered by the
	// operator label as the reconciler's manager filters its cache.
	cached client.Reader
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := cluster.Binary("kube-apiserver"); err != nil && os.Getenv(testtool.RequireEnv) == "" {
		fmt.Fprintln(os.Stderr, "diserver: skipped:", err)
		return 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startCtx, started := context.WithTimeout(ctx, 5*time.Minute)
	defer started()
	var err error
	// Pods take loopback addresses, so that a request can come from a
	// pod's address as it does in a cluster.
	if kube, err = cluster.Start(startCtx, cluster.Options{Nodes: 2, PodCIDR: podCIDR}); err != nil {
		fmt.Fprintln(os.Stderr, "diserver: starting the control plane:", err)
		return 1
	}
	defer kube.Stop()
	if live, err = client.New(kube.Config, client.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "diserver:", err)
		return 1
	}
	rendered := k8slabels.SelectorFromSet(k8slabels.Set{handoff.OperatorNameLabel: handoff.Operator})
	informers, err := cache.New(kube.Config, cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: rendered}, &batchv1.Job{}: {Label: rendered}, &appsv1.StatefulSet{}: {Label: rendered},
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "diserver:", err)
		return 1
	}
	go func() {
		if err := informers.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "diserver: the cache stopped:", err)
		}
	}()
	cached = informers
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "diserver: the components' last words:\n%s", kube.Logs(20))
	}
	return code
}
