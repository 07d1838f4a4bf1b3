//go:build e2e

package kueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/trainfn/trainfn/test/cluster"
)

// rackLabel is the node label of the racks the test gives the fake nodes.
const rackLabel = "example.com/rack"

// TestKueuePlacesAJobInOneRack asks Kueue's topology-aware scheduling to
// place every pod of an MPIJob in one rack, on the launcher's template and
// the workers': each PodSet of the job's one Workload must require the
// rack, and Kueue must place its pods, each pinned to a node, all in one
// rack, though the job needs two nodes of it.
func TestKueuePlacesAJobInOneRack(t *testing.T) {
	ctx := context.Background()
	nodes, err := kube.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	rackOf := map[string]string{}
	for i, node := range nodes.Items {
		rack := fmt.Sprintf("r%d", i%2)
		rackOf[node.Name] = rack
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q,"example.com/block":"b0"}}}`, rackLabel, rack)
		_, err := kube.Client.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	ns := kube.Namespace(t)
	remove, err := kube.ClusterQueue(ctx, ns, plenty, cluster.Flavor{
		NodeLabels:     map[string]string{"type": "kwok"},
		TopologyLevels: []string{"example.com/block", rackLabel, corev1.LabelHostname},
	})
	require.NoError(t, err)
	t.Cleanup(remove)
	apply(t, ns, []byte(cluster.LocalQueue("jobs", ns)))

	// Four pods of 20 CPUs: more than one node's 64, so the rack's
	// second node is needed too.
	const job = `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: racked
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        metadata:
          annotations: {kueue.x-k8s.io/podset-required-topology: example.com/rack}
        spec:
          containers:
          - {name: launcher, image: registry.example/app:1, command: [mpirun, app], resources: {requests: {cpu: "20"}}}
    Worker:
      replicas: 3
      template:
        metadata:
          annotations: {kueue.x-k8s.io/podset-required-topology: example.com/rack}
        spec:
          containers:
          - {name: worker, image: registry.example/app:1, resources: {requests: {cpu: "20"}}}
`
	apply(t, ns, render(t, writeInput(t, job), ""))
	err = kube.Wait(ctx, "the job's pods placed in one rack", time.Minute, func(ctx context.Context) error {
		pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		racks, hosts := map[string]bool{}, map[string]bool{}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				return fmt.Errorf("pod %s is not placed", p.Name)
			}
			if p.Spec.NodeSelector[corev1.LabelHostname] == "" {
				return fmt.Errorf("pod %s runs where kube-scheduler put it, not Kueue: no node in its nodeSelector %v", p.Name, p.Spec.NodeSelector)
			}
			racks[rackOf[p.Spec.NodeName]], hosts[p.Spec.NodeName] = true, true
		}
		if len(pods.Items) != 4 {
			return fmt.Errorf("%d pods of 4", len(pods.Items))
		}
		if len(racks) != 1 {
			return fmt.Errorf("the pods are in racks %v", racks)
		}
		wls, err := kube.Workloads(ctx, ns)
		if err != nil {
			return err
		}
		if len(wls) != 1 {
			return fmt.Errorf("%d Workloads, not one for the job", len(wls))
		}
		for _, required := range wls[0].RequiredTopologies {
			if required != rackLabel {
				return fmt.Errorf("Workload %s's PodSets require %v, not each the rack", wls[0].Name, wls[0].RequiredTopologies)
			}
		}
		t.Logf("the job's pods run on %v, of one rack", hosts)
		return nil
	})
	require.NoError(t, err, "%s", describe(ns))
}
