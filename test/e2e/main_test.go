//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/test/cluster"
)

// kube is the control plane every test of the suite shares; each test gets
// its own namespace.
var kube *cluster.Cluster

// fakeNodes are enough nodes of 8 GPUs each for the largest output,
// testdata/v1alpha1-gpus-split's 16 workers of 8 GPUs, a node each, applied
// by both routes at once, beside the other outputs applied in parallel,
// whose pods hold their GPUs until their namespace is gone: with 40, a
// loaded machine left the split's last workers without a node.
const fakeNodes = 64

// nodeResources are what the vendor samples among the outputs ask of a
// node beyond the default fake node's, so that their pods are placed:
// testdata/aws-do-eks-v1alpha2-deepspeed-bert's workers take 90 CPUs,
// Habana's Gaudi accelerators, AWS's EFA devices and huge pages;
// testdata/oci-health-check-sshd-port-2222's, a bare-metal GPU node's 100
// CPUs, 512Gi of memory and 32Gi of local storage.
var nodeResources = corev1.ResourceList{
	corev1.ResourceCPU:              resource.MustParse("128"),
	corev1.ResourceMemory:           resource.MustParse("1Ti"),
	corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	"habana.ai/gaudi":               resource.MustParse("8"),
	"vpc.amazonaws.com/efa":         resource.MustParse("4"),
	"hugepages-2Mi":                 resource.MustParse("64Gi"),
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The GitOps syncs' controller-runtime clients log through its global
	// logger: without one, they print a stack trace into the output.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	var err error
	kube, err = cluster.Start(ctx, cluster.Options{
		Nodes:            fakeNodes,
		NodeResources:    nodeResources,
		ControlPlaneNode: true, // some launchers ask to run on one
		SchedulerNames:   standInSchedulers,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the control plane:", err)
		return 1
	}
	defer kube.Stop()
	if err = installGangCRDs(ctx, kube); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: installing the gang schedulers' CRDs:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: control plane up in %s\n", time.Since(began).Round(time.Millisecond))
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: the components' last words:\n%s", kube.Logs(20))
	}
	return code
}
