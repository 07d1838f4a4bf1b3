//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
)

// TestCleanUp ends jobs and checks that their workers are stopped as their
// runPolicy.cleanPodPolicy asks: mpi-operator's behaviour. An MPIJob's
// workers stop by themselves when the launcher tells them (test/onnode runs
// that); kwok's pods run no command, and the reconciler, the backstop, stops
// them a while after the launcher ended.
func TestCleanUp(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"Running", "All", "None"} {
		t.Run("static "+policy, func(t *testing.T) {
			t.Parallel()
			ns := kube.Namespace(t)
			j := deploy(t, ns, mpiJob{Name: "static", Workers: 2, Slots: 1, CleanPodPolicy: policy})
			startReconciler(t, ns)
			workers := j.waitRunning(t, handoff.RoleWorker, 2)
			if policy == "None" {
				j.kept[workers[0].Name] = workers[0].UID
			}
			// A worker that finished before the job did: Running leaves
			// it, All removes it.
			finish(t, ns, workers[1].Name, 0)
			finish(t, ns, j.waitRunning(t, handoff.RoleLauncher, 1)[0].Name, 0)
			w := j.waitEnded(t, "Succeeded")
			if policy == "None" {
				if w.Spec.Suspend != nil && *w.Spec.Suspend {
					t.Error("cleanPodPolicy None: the workers' Job is suspended")
				}
			} else {
				// A worker that succeeded ends the workers' Job (its
				// successPolicy), which stops the rest, as when the launcher
				// tells one the job ended; one that never stops by itself
				// is suspended by the reconciler a while after the launcher's
				// end. Either way none runs on.
				if w.Spec.SuccessPolicy == nil {
					t.Fatal("the workers' Job has no successPolicy: they cannot stop by themselves")
				}
				eventually(t, "the workers' Job stopped", func(ctx context.Context) error { return stopped(ctx, ns, j.name+"-worker") })
			}
			want := map[string][]string{
				"Running": {workers[1].Name + "(Succeeded)"},
				"All":     nil,
				"None":    {workers[0].Name + "(Running,ready)", workers[1].Name + "(Succeeded)"},
			}[policy]
			j.waitPods(t, handoff.RoleWorker, want...)
			if policy == "Running" {
				// GitOps syncing the job again does not start its workers
				// again: a finished Job stays finished, and suspend is the
				// reconciler's field, not Git's.
				ctx, cancel := timeout()
				defer cancel()
				if err := apply(ctx, ns, gitOps, true, j.objs); err != nil {
					t.Fatal(err)
				}
				if err := stopped(ctx, ns, j.name+"-worker"); err != nil {
					t.Errorf("applying the job again: %v", err)
				}
				j.waitPods(t, handoff.RoleWorker, want...)
			}
			j.checkInvariants(t)
		})
	}

	// Workers the launcher could not tell (kwok's run no command) are
	// suspended by the reconciler once their grace has passed.
	t.Run("static Running, workers not told", func(t *testing.T) {
		t.Parallel()
		ns := kube.Namespace(t)
		j := deploy(t, ns, mpiJob{Name: "untold", Workers: 2, Slots: 1, CleanPodPolicy: "Running"})
		startReconciler(t, ns)
		j.waitRunning(t, handoff.RoleWorker, 2)
		finish(t, ns, j.waitRunning(t, handoff.RoleLauncher, 1)[0].Name, 0)
		j.waitEnded(t, "Succeeded")
		eventually(t, "the workers' Job suspended", func(ctx context.Context) error {
			w, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, j.name+"-worker", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if w.Spec.Suspend == nil || !*w.Spec.Suspend {
				return fmt.Errorf("not suspended")
			}
			return nil
		})
		j.waitPods(t, handoff.RoleWorker)
		j.checkInvariants(t)
	})

	// Under Kueue an elastic job's workers are an Indexed Job Kueue
	// manages, which would resume it if it were suspended: workers the
	// launcher could not tell are resized to zero instead, a resize Kueue
	// follows (test/kueue), once their grace has passed.
	t.Run("elastic Running under Kueue, workers not told", func(t *testing.T) {
		t.Parallel()
		ns := kube.Namespace(t)
		j := deploy(t, ns, stringer(underKueue(elasticMPIJob.String())))
		startReconciler(t, ns)
		j.waitRunning(t, handoff.RoleWorker, 2)
		finish(t, ns, j.waitRunning(t, handoff.RoleLauncher, 1)[0].Name, 0)
		w := j.waitEnded(t, "Succeeded")
		if w.Spec.Suspend != nil && *w.Spec.Suspend {
			t.Error("the reconciler suspended a Job Kueue manages")
		}
		eventually(t, "the workers resized to zero", func(ctx context.Context) error {
			w, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, j.name+"-worker", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p := replicasOf(w.Spec.Parallelism); p != "0" {
				return fmt.Errorf("parallelism %s", p)
			}
			return nil
		})
		j.waitPods(t, handoff.RoleWorker)
	})

	t.Run("elastic Running", func(t *testing.T) {
		t.Parallel()
		j, _ := startElastic(t)
		finish(t, j.ns, j.waitRunning(t, handoff.RoleLauncher, 1)[0].Name, 0)
		j.waitReplicas(t, 0)
		j.waitPods(t, handoff.RoleWorker)
		if s := j.liveStatefulSet(t); s.Annotations[handoff.Ended] != "Succeeded" {
			t.Errorf("annotation %s is %q, want Succeeded", handoff.Ended, s.Annotations[handoff.Ended])
		}
		j.checkInvariants(t)
	})

	t.Run("elastic PyTorchJob", func(t *testing.T) {
		t.Parallel()
		ns := kube.Namespace(t)
		j := deploy(t, ns, specString(elasticPyTorchJob("echo")))
		startReconciler(t, ns)
		workers := j.waitRunning(t, handoff.RoleWorker, 2)
		// torchrun's agents exit 0 once training is done, and the kubelet
		// starts them again: the first such exit ends the job, whatever
		// its cleanPodPolicy (None here).
		restartedAfterSuccess(t, ns, workers[0].Name, "pytorch")
		j.waitReplicas(t, 0)
		j.waitPods(t, handoff.RoleWorker)
		if s := j.liveStatefulSet(t); s.Annotations[handoff.Ended] != "Succeeded" {
			t.Errorf("annotation %s is %q, want Succeeded", handoff.Ended, s.Annotations[handoff.Ended])
		}
		j.checkInvariants(t)
	})
}

// waitEnded waits until the reconciler has marked the workers' Job ended,
// and returns the Job.
func (j *job) waitEnded(t *testing.T, how string) *batchv1.Job {
	t.Helper()
	var w *batchv1.Job
	eventually(t, "the workers' Job marked "+how, func(ctx context.Context) error {
		var err error
		if w, err = kube.Client.BatchV1().Jobs(j.ns).Get(ctx, j.name+"-worker", metav1.GetOptions{}); err != nil {
			return err
		}
		if got := w.Annotations[handoff.Ended]; got != how {
			return fmt.Errorf("annotation %s is %q; conditions %v", handoff.Ended, got, w.Status.Conditions)
		}
		return nil
	})
	return w
}

// stopped succeeds when the named Job has ended or is suspended.
func stopped(ctx context.Context, ns, name string) error {
	w, err := kube.Client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if w.Spec.Suspend != nil && *w.Spec.Suspend {
		return nil
	}
	for _, c := range w.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("the Job %s runs: %v", name, w.Status.Conditions)
}
