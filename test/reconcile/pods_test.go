//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// kwok's kubelets make a scheduled pod Running and Ready and then leave its
// status alone, so a test writes the status a real kubelet would report.

// setReady reports a pod's readiness, as a kubelet does when a readiness
// probe starts or stops failing.
func setReady(t *testing.T, ns, pod string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	updateStatus(t, ns, pod, func(p *corev1.Pod) {
		for i, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = status
				p.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
		}
		for i := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].Ready = ready
		}
	})
}

// finish reports that a pod's containers exited with a code, and so the pod
// reached its end: Succeeded for 0, Failed otherwise.
func finish(t *testing.T, ns, pod string, exitCode int32) {
	t.Helper()
	updateStatus(t, ns, pod, func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodSucceeded
		reason := "Completed"
		if exitCode != 0 {
			p.Status.Phase, reason = corev1.PodFailed, "Error"
		}
		for i, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
			}
		}
		for i, c := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].Ready = false
			p.Status.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Reason: reason, StartedAt: startedAt(c), FinishedAt: metav1.Now(),
			}}
		}
	})
}

// restartedAfterSuccess reports that a container exited with status 0 and
// was started again, as the kubelet restarts a StatefulSet's containers:
// how an elastic PyTorchJob's agents say that training is done.
func restartedAfterSuccess(t *testing.T, ns, pod, container string) {
	t.Helper()
	updateStatus(t, ns, pod, func(p *corev1.Pod) {
		for i, c := range p.Status.ContainerStatuses {
			if c.Name != container {
				continue
			}
			p.Status.ContainerStatuses[i].RestartCount++
			p.Status.ContainerStatuses[i].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", StartedAt: startedAt(c), FinishedAt: metav1.Now(),
			}}
			p.Status.ContainerStatuses[i].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
		}
	})
}

func startedAt(c corev1.ContainerStatus) metav1.Time {
	if c.State.Running != nil {
		return c.State.Running.StartedAt
	}
	return metav1.Now()
}

func updateStatus(t *testing.T, ns, pod string, change func(*corev1.Pod)) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	pods := kube.Client.CoreV1().Pods(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := pods.Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(p)
		_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{FieldManager: "kubelet"})
		return err
	})
	if err != nil {
		t.Fatalf("writing the status of pod %s: %v", pod, err)
	}
}

// holdFinalizer keeps a deleted pod in the API, terminating, until the test
// lets it go: the pod a scale-down or a deletion removes would otherwise be
// gone too soon to see what the reconciler makes of it meanwhile.
const holdFinalizer = "e2e.trainfn.dev/hold"

// hold adds the finalizer to a pod, and removes it when the test ends, so
// that the namespace can go.
func hold(t *testing.T, ns, pod string) {
	t.Helper()
	setFinalizer(t, ns, pod, true)
	t.Cleanup(func() { release(t, ns, pod) })
}

// release lets a held pod go.
func release(t *testing.T, ns, pod string) {
	t.Helper()
	setFinalizer(t, ns, pod, false)
}

func setFinalizer(t *testing.T, ns, pod string, on bool) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	pods := kube.Client.CoreV1().Pods(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := pods.Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		has := slices.Contains(p.Finalizers, holdFinalizer)
		switch {
		case on && !has:
			p.Finalizers = append(p.Finalizers, holdFinalizer)
		case !on && has:
			p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == holdFinalizer })
		default:
			return nil
		}
		_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !(apierrors.IsNotFound(err) && !on) {
		t.Fatalf("setting the finalizer of pod %s to %v: %v", pod, on, err)
	}
}

// waitGone waits until a pod of that name no longer exists, or has a UID
// other than uid.
func waitGone(t *testing.T, ns, pod string, uid string) {
	t.Helper()
	eventually(t, "pod "+pod+" gone", func(ctx context.Context) error {
		p, err := kube.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		case string(p.UID) != uid:
			return nil
		}
		return fmt.Errorf("pod %s is %s, deleting since %v", pod, p.Status.Phase, p.DeletionTimestamp)
	})
}
