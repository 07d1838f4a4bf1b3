//go:build e2e

package kueue

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/trainfn/trainfn/test/cluster"
)

// elasticJobs are an elastic MPIJob and an elastic PyTorchJob, each of 2
// workers that may be 1 to 4, each worker asking for 1 CPU, as a user
// writes them.
var elasticJobs = []struct{ kind, manifest string }{
	{"MPIJob", `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: elastic
  annotations:
    trainfn.dev/elastic-workers: "1:4"
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: registry.example/horovod:1
            command: [horovodrun, -np, "2", --min-np, "1", --max-np, "4", --host-discovery-script, /etc/mpi/discover_hosts.sh, python, train.py]
            resources: {requests: {cpu: "1"}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: registry.example/horovod:1
            resources: {requests: {cpu: "1"}}
`},
	{"PyTorchJob", `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: elastic
  annotations:
    trainfn.dev/elastic-workers: "1:4"
spec:
  elasticPolicy:
    rdzvBackend: c10d
    minReplicas: 1
    maxReplicas: 4
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/train:1
            command: [torchrun, train.py]
            resources: {requests: {cpu: "1"}}
`},
}

// TestKueueResizesAnElasticJob resizes the workers of an elastic MPIJob
// and of an elastic PyTorchJob 2 → 3 → 2 under Kueue, as a person or the
// reconciler does, through the workers' Job's completions and parallelism:
// the Workload Kueue admits for the workers follows each size, and the
// pods placed with it. Then a resize past the ClusterQueue's room for 3
// workers waits: Kueue admits no slice of 4, the new workers stay gated,
// the 2 admitted keep running, and nothing fails; resized back, the job
// runs on as before.
func TestKueueResizesAnElasticJob(t *testing.T) {
	for _, tt := range elasticJobs {
		t.Run(tt.kind, func(t *testing.T) {
			t.Parallel()
			ns := kube.Namespace(t)
			out := render(t, writeInput(t, tt.manifest), "")
			// An MPIJob's launcher asks for a CPU too, and is a
			// Workload of its own.
			room := int64(3)
			if tt.kind == "MPIJob" {
				room++
			}
			queue(t, ns, corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(room, resource.DecimalSI)})
			apply(t, ns, out)
			w := workers{ns: ns, job: "elastic-worker"}
			for step, n := range []int32{2, 3, 2} {
				if step > 0 {
					w.resize(t, n)
				}
				w.admitted(t, n)
			}

			w.resize(t, 4)
			ctx := context.Background()
			require.NoError(t, kube.Wait(ctx, "a slice of 4 workers to wait for quota, and the 2 new workers to be gated", time.Minute, func(ctx context.Context) error {
				pending, err := w.pendingSlice(ctx)
				if err != nil {
					return err
				}
				if pending == nil {
					return fmt.Errorf("no Workload of 4 workers waits")
				}
				pods, err := w.pods(ctx)
				if err != nil {
					return err
				}
				if pods.gated != 2 {
					return fmt.Errorf("%d new workers gated, not 2", pods.gated)
				}
				return nil
			}), "%s", describe(ns))
			for range 10 {
				pods, err := w.pods(ctx)
				require.NoError(t, err)
				require.Equal(t, 2, pods.placed, "workers placed past the quota, or admitted ones stopped:\n%s", describe(ns))
				require.Equal(t, 2, pods.gated, "the workers past the quota are not held by Kueue's gate:\n%s", describe(ns))
				require.Zero(t, pods.failed, "a worker failed while the resize waited:\n%s", describe(ns))
				active, err := w.active(ctx)
				require.NoError(t, err)
				require.Equal(t, int64(2), active.Pods, "the admitted Workload no longer holds the 2 running workers:\n%s", describe(ns))
				time.Sleep(500 * time.Millisecond)
			}
			pending, err := w.pendingSlice(ctx)
			require.NoError(t, err)
			t.Logf("the slice of 4 waits: %s", pending.Message)

			w.resize(t, 2)
			w.admitted(t, 2)
		})
	}
}

// workers are an elastic job's workers' Job under Kueue.
type workers struct{ ns, job string }

// resize asks for n workers, completions and parallelism together, as an
// elastic Indexed Job is resized.
func (w workers) resize(t *testing.T, n int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"parallelism":%d,"completions":%d}}`, n, n)
	_, err := kube.Client.BatchV1().Jobs(w.ns).Patch(context.Background(), w.job, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	require.NoError(t, err)
}

// admitted waits until the workers' one active Workload is admitted with n
// pods, no other of theirs waits, and n workers, no more, are placed.
func (w workers) admitted(t *testing.T, n int32) {
	t.Helper()
	var last []cluster.Workload
	err := kube.Wait(context.Background(), fmt.Sprintf("a Workload of %d workers admitted, and %d placed", n, n), time.Minute, func(ctx context.Context) error {
		wls, err := w.workloads(ctx)
		if err != nil {
			return err
		}
		last = wls
		var open []cluster.Workload
		for _, wl := range wls {
			if !wl.Finished {
				open = append(open, wl)
			}
		}
		if len(open) != 1 || !open[0].Admitted || open[0].Pods != int64(n) {
			return fmt.Errorf("the workers' Workloads not finished are %v, not one admitted of %d pods", open, n)
		}
		pods, err := w.pods(ctx)
		if err != nil {
			return err
		}
		if pods.placed != int(n) || pods.gated != 0 {
			return fmt.Errorf("%d workers placed and %d gated, not %d and none", pods.placed, pods.gated, n)
		}
		return nil
	})
	require.NoError(t, err, "%s", describe(w.ns))
	t.Logf("%d workers: Workloads %v", n, last)
}

// workloads are the Workloads Kueue made for the workers' Job: one per
// slice, the replaced ones finished.
func (w workers) workloads(ctx context.Context) ([]cluster.Workload, error) {
	wls, err := kube.Workloads(ctx, w.ns)
	return slices.DeleteFunc(wls, func(wl cluster.Workload) bool { return wl.Owner != "Job/"+w.job }), err
}

// active is the workers' admitted Workload not finished.
func (w workers) active(ctx context.Context) (cluster.Workload, error) {
	wls, err := w.workloads(ctx)
	for _, wl := range wls {
		if wl.Admitted && !wl.Finished {
			return wl, err
		}
	}
	return cluster.Workload{}, fmt.Errorf("no admitted Workload of the workers: %v (%v)", wls, err)
}

// pendingSlice is the workers' Workload of 4 that waits for quota, with
// Kueue's word why; nil if there is none.
func (w workers) pendingSlice(ctx context.Context) (*cluster.Workload, error) {
	wls, err := w.workloads(ctx)
	for _, wl := range wls {
		if wl.Pods == 4 && !wl.Admitted && !wl.Finished && wl.Message != "" {
			return &wl, err
		}
	}
	return nil, err
}

// workerPods counts the workers' pods not being deleted: those placed on a
// node, those held by a scheduling gate, and those failed.
type workerPods struct{ placed, gated, failed int }

func (w workers) pods(ctx context.Context) (workerPods, error) {
	list, err := kube.Client.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + w.job})
	if err != nil {
		return workerPods{}, err
	}
	var c workerPods
	for _, p := range list.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodFailed:
			c.failed++
		case len(p.Spec.SchedulingGates) > 0:
			c.gated++
		case p.Spec.NodeName != "":
			c.placed++
		}
	}
	return c, nil
}
