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
	"github.com/trainfn/trainfn/test/gitopssync"
	"github.com/trainfn/trainfn/test/testtool"
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
// and of an elastic PyTorchJob under Kueue through the workers' Job's
// parallelism, first to the job's 2 as the reconciler does once Kueue has
// admitted the Job at 1 (the render leaves the count out, and the API
// server defaults it), then to 3 and 2 as a person does: the Workload Kueue admits for the workers
// follows each size, and the pods placed with it. Then a resize past the
// ClusterQueue's room for 3 workers waits: Kueue admits no slice of 4, the
// new workers stay gated, the 2 admitted keep running, and nothing fails;
// resized back, the job runs on as before. Resized to zero, as the
// reconciler stops the workers of a job that ended, no worker is left and
// their Workload holds none.
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
			w.admitted(t, 1)
			for _, n := range []int32{2, 3, 2} {
				w.resize(t, n)
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

			// The reconciler stops the workers of a job that ended by
			// resizing them to zero: Kueue would resume a suspended Job.
			w.resize(t, 0)
			require.NoError(t, kube.Wait(ctx, "the workers gone and their quota freed", time.Minute, func(ctx context.Context) error {
				pods, err := w.pods(ctx)
				if err != nil {
					return err
				}
				if pods.placed+pods.gated != 0 {
					return fmt.Errorf("%d workers placed and %d gated", pods.placed, pods.gated)
				}
				wls, err := w.workloads(ctx)
				if err != nil {
					return err
				}
				for _, wl := range wls {
					if !wl.Finished && wl.Pods != 0 {
						return fmt.Errorf("Workload %s still holds %d workers", wl.Name, wl.Pods)
					}
				}
				return nil
			}), "%s", describe(ns))
		})
	}
}

// workers are an elastic job's workers' Job under Kueue.
type workers struct{ ns, job string }

// resize asks for n workers.
func (w workers) resize(t *testing.T, n int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"parallelism":%d}}`, n)
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

// TestKueueElasticJobKeepsItsCountThroughASync syncs an elastic MPIJob's
// output under Kueue with Flux's apply engine and as Argo CD does, resizes
// its workers, and syncs the same output again, as either tool does at
// every interval: the render leaves the workers' count out, so the sync
// neither resets it nor recreates the Job (whose template Kueue's webhook
// gave a scheduling gate), and Kueue keeps it admitted at its size.
func TestKueueElasticJobKeepsItsCountThroughASync(t *testing.T) {
	objs := decode(t, render(t, writeInput(t, elasticJobs[0].manifest), ""))
	flux, err := gitopssync.Flux(kube.Config, gitopssync.FluxOptions())
	require.NoError(t, err)
	for name, sync := range map[string]gitopssync.Sync{
		"Flux":    flux,
		"Argo CD": gitopssync.ArgoCD(testtool.Find(t, "argocd-harness"), kube.Kubeconfig, false),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := kube.Namespace(t)
			queue(t, ns, plenty)
			synced := func() {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				report, err := sync(ctx, ns, objs)
				require.NoError(t, err, "%s:\n%s", name, report)
				t.Logf("%s:\n%s", name, report)
			}
			synced()
			w := workers{ns: ns, job: "elastic-worker"}
			w.admitted(t, 1)
			w.resize(t, 3)
			w.admitted(t, 3)
			ctx := context.Background()
			before, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, w.job, metav1.GetOptions{})
			require.NoError(t, err)

			synced()
			after, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, w.job, metav1.GetOptions{})
			require.NoError(t, err)
			require.Equal(t, before.UID, after.UID, "the sync made the workers' Job again")
			require.Equal(t, int32(3), ptrOr(after.Spec.Parallelism, 1), "the sync reset the workers' count")
			w.admitted(t, 3)
		})
	}
}
