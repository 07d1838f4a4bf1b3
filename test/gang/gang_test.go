//go:build e2e

package gang

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

var (
	kube             *cluster.Cluster
	trainfn, kubectl string
)

// slot is a device every fake node has two of, and every pod of the job
// asks one of: the test's measure of room.
const slot = "example.com/slot"

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var ok bool
	if kubectl, ok = testtool.Built("kubectl"); !ok {
		fmt.Fprintln(os.Stderr, "gang: kubectl is not built: run hack/tools.sh e2e")
		return 1
	}
	var err error
	// Two nodes of two slots: room for four pods of one slot.
	kube, err = cluster.Start(ctx, cluster.Options{Nodes: 2, NodeResources: corev1.ResourceList{slot: resource.MustParse("2")}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gang: starting the control plane:", err)
		return 1
	}
	defer kube.Stop()
	code := testtool.RunWithTrainfn(m, &trainfn)
	if code != 0 {
		fmt.Fprintf(os.Stderr, "gang: the components' last words:\n%s", kube.Logs(20))
	}
	return code
}

// job is an MPIJob of a launcher and four workers, each pod asking for a
// slot: five slots, one more than the nodes have.
func job(scheduler string) string {
	return fmt.Sprintf(`apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: gang
  annotations:
    trainfn.dev/gang-scheduler: %s
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: launcher
            image: registry.example/app:1
            command: [mpirun, -n, "4", app]
            resources: {limits: {%[2]s: 1}}
    Worker:
      replicas: 4
      template:
        spec:
          containers:
          - name: worker
            image: registry.example/app:1
            resources: {limits: {%[2]s: 1}}
`, scheduler, slot)
}

// TestKubernetesGangBindsAllOrNone renders a job of five pods for
// Kubernetes' own gang scheduling on a cluster with room for four: the
// scheduler binds none of them, and says so on the PodGroup; once a node
// adds room, it binds all five. Without the gang, four of the same pods
// bind and the fifth waits: the gang is what holds them.
func TestKubernetesGangBindsAllOrNone(t *testing.T) {
	ctx := context.Background()

	// Without a gang first, in a namespace of its own, then gone: the
	// room is the cluster's, shared by both.
	plain := kube.Namespace(t)
	apply(t, plain, render(t, job("None")))
	require.NoError(t, kube.Wait(ctx, "four of the job's pods bound without a gang", time.Minute, func(context.Context) error {
		if n := bound(t, plain); n != 4 {
			return fmt.Errorf("%d pods bound", n)
		}
		return nil
	}))
	require.NoError(t, kube.Client.CoreV1().Namespaces().Delete(ctx, plain, metav1.DeleteOptions{}))
	require.NoError(t, kube.Wait(ctx, "the room freed", time.Minute, func(ctx context.Context) error {
		pods, err := kube.Client.CoreV1().Pods(plain).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) > 0 {
			return fmt.Errorf("%d pods left (%v)", len(pods.Items), err)
		}
		return nil
	}))

	ns := kube.Namespace(t)
	apply(t, ns, render(t, job("Kubernetes")))
	require.NoError(t, kube.Wait(ctx, "the scheduler to find the gang unschedulable", time.Minute, func(ctx context.Context) error {
		var group struct {
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		raw, err := kube.Client.CoreV1().RESTClient().Get().AbsPath("/apis/scheduling.k8s.io/v1beta1/namespaces", ns, "podgroups", "gang").DoRaw(ctx)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &group); err != nil {
			return err
		}
		for _, c := range group.Status.Conditions {
			if c.Type == "PodGroupInitiallyScheduled" && c.Status == metav1.ConditionFalse && c.Reason == "Unschedulable" {
				return nil
			}
		}
		return fmt.Errorf("PodGroup gang's conditions: %+v", group.Status.Conditions)
	}))
	for range 10 {
		require.Zero(t, bound(t, ns), "a pod of the gang bound with room for four of its five")
		time.Sleep(500 * time.Millisecond)
	}

	require.NoError(t, kube.AddNode(ctx, "kwok-node-room", corev1.ResourceList{slot: resource.MustParse("2")}))
	require.NoError(t, kube.Wait(ctx, "all five pods bound once there is room", time.Minute, func(context.Context) error {
		if n := bound(t, ns); n != 5 {
			return fmt.Errorf("%d pods bound", n)
		}
		return nil
	}))
}

// bound is how many pods of the namespace are bound to a node.
func bound(t *testing.T, ns string) int {
	t.Helper()
	pods, err := kube.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	n := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// render runs trainfn render over a job.
func render(t *testing.T, manifest string) []byte {
	t.Helper()
	input := filepath.Join(t.TempDir(), "job.yaml")
	require.NoError(t, os.WriteFile(input, []byte(manifest), 0o644))
	return testtool.Render(t, trainfn, input)
}

// apply applies a YAML stream into the namespace with kubectl.
func apply(t *testing.T, ns string, stream []byte) {
	t.Helper()
	testtool.Apply(t, kubectl, kube.Kubeconfig, ns, stream)
}
