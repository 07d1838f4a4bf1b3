//go:build e2e

package kueue

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKueueAdmitsAJobAppliedAgain runs a job again under the same name,
// its Jobs deleted and made again as Argo CD's and Flux's force options
// do. Kueue keeps a finished pod group's Workload, named after the group,
// and leaves new pods of the same group gated for good:
//   - a job changed in Git is a new revision, whose pods form a group of a
//     new name (<job>-<render digest>): it is admitted with the old
//     Workload still there;
//   - the same output applied again is the same group, so its Workload must
//     be deleted first, as docs/gang-scheduling.md says.
func TestKueueAdmitsAJobAppliedAgain(t *testing.T) {
	input := filepath.Join("..", "..", "render", "mpijob", "testdata", "v2beta1", "mpi-operator-pi", "input.yaml")
	data, err := os.ReadFile(input)
	require.NoError(t, err)
	changed := bytes.Replace(data, []byte(`- "2"`), []byte(`- "3"`), 1)
	require.NotEqual(t, data, changed)
	for _, tt := range []struct {
		name string
		// again is the job applied the second time.
		again []byte
		// forget deletes the first run's Workload before.
		forget bool
	}{
		{name: "changed in Git", again: changed},
		{name: "unchanged", again: data, forget: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := kube.Namespace(t)
			queue(t, ns, plenty)
			first := render(t, writeInput(t, string(data)), "")
			again := render(t, writeInput(t, string(tt.again)), "")
			ctx := context.Background()
			apply(t, ns, first)
			placedAll(t, ns, "the job admitted and placed")
			wls, err := kube.Workloads(ctx, ns)
			require.NoError(t, err)
			require.Len(t, wls, 1)
			background := metav1.DeletePropagationBackground
			require.NoError(t, kube.Client.BatchV1().Jobs(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, metav1.ListOptions{}))
			require.NoError(t, kube.Wait(ctx, "the Jobs gone", time.Minute, func(ctx context.Context) error {
				jobs, err := kube.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
				if err != nil || len(jobs.Items) > 0 {
					return fmt.Errorf("%d Jobs left (%v)", len(jobs.Items), err)
				}
				return nil
			}))
			if tt.forget {
				require.NoError(t, kube.DeleteWorkload(ctx, ns, wls[0].Name))
			}
			apply(t, ns, again)
			placedAll(t, ns, "the job applied again admitted and placed")
		})
	}
}

// placedAll waits until the 3 pods of the namespace's pi job are placed.
func placedAll(t *testing.T, ns, what string) {
	t.Helper()
	require.NoError(t, kube.Wait(context.Background(), what, time.Minute, func(ctx context.Context) error {
		pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		placed := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				placed++
			}
		}
		if placed != 3 {
			return fmt.Errorf("%d of the job's 3 pods placed", placed)
		}
		return nil
	}), "%s", describe(ns))
}
