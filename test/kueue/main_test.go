//go:build e2e

package kueue

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// kube is the control plane the suite shares, Kueue on it; each test gets
// its own namespace and its own ClusterQueue.
var kube *cluster.Cluster

// trainfn and kubectl are the binaries the tests run.
var trainfn, kubectl string

// nodeResources are what every fake node offers: room for the jobs that
// ask for GPUs.
var nodeResources = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("64"),
	corev1.ResourceMemory: resource.MustParse("512Gi"),
	"nvidia.com/gpu":      resource.MustParse("8"),
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var ok bool
	if kubectl, ok = testtool.Built("kubectl"); !ok {
		fmt.Fprintln(os.Stderr, "kueue: kubectl is not built: run hack/tools.sh e2e")
		return 1
	}
	began := time.Now()
	var err error
	kube, err = cluster.Start(ctx, cluster.Options{Nodes: 8, NodeResources: nodeResources})
	if err != nil {
		fmt.Fprintln(os.Stderr, "kueue: starting the control plane:", err)
		return 1
	}
	defer kube.Stop()
	if err = kube.StartKueue(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "kueue: starting Kueue: %v\n%s", err, kube.Logs(20))
		return 1
	}
	fmt.Fprintf(os.Stderr, "kueue: control plane and Kueue up in %s\n", time.Since(began).Round(time.Millisecond))
	code := testtool.RunWithTrainfn(m, &trainfn)
	if code != 0 {
		fmt.Fprintf(os.Stderr, "kueue: the components' last words:\n%s", kube.Logs(20))
	}
	return code
}
