//go:build e2e

package kueue

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKueueAdmitsAJobAppliedAgain runs a job again under the same name as
// docs/gang-scheduling.md says to: its Jobs deleted, then its Workload,
// then the same output applied again. Kueue keeps a finished pod group's
// Workload and leaves new pods of the same group gated, so the Workload
// must go first; the new pods are then admitted as a new Workload.
func TestKueueAdmitsAJobAppliedAgain(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	queue(t, ns, plenty)
	out := render(t, filepath.Join("..", "..", "render", "mpijob", "testdata", "v2beta1", "mpi-operator-pi", "input.yaml"), "")
	ctx := context.Background()
	placedAll := func(what string) {
		t.Helper()
		require.NoError(t, kube.Wait(ctx, what, time.Minute, func(ctx context.Context) error {
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
	apply(t, ns, out)
	placedAll("the job admitted and placed")
	background := metav1.DeletePropagationBackground
	require.NoError(t, kube.Client.BatchV1().Jobs(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &background}, metav1.ListOptions{}))
	require.NoError(t, kube.Wait(ctx, "the Jobs gone", time.Minute, func(ctx context.Context) error {
		jobs, err := kube.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(jobs.Items) > 0 {
			return fmt.Errorf("%d Jobs left (%v)", len(jobs.Items), err)
		}
		return nil
	}))
	require.NoError(t, kube.DeleteWorkload(ctx, ns, "pi"))
	apply(t, ns, out)
	placedAll("the job applied again admitted and placed")
}
