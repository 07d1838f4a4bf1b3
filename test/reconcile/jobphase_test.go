//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/trainfn/trainfn/render/handoff"
)

// TestJobPhaseEvents runs an MPIJob through its life, a worker's restart
// included, and checks that each change of its phase is recorded on its
// first workload, the launcher's Job, with one event of training-operator's
// reason, in order, and counted once: a reconciler that replaces the first
// announces and counts nothing again.
func TestJobPhaseEvents(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	j := deploy(t, ns, mpiJob{Name: "phases", Workers: 2, Slots: 1, CleanPodPolicy: "Running"})
	r := startReconciler(t, ns)
	launcher := j.name + "-launcher"

	j.waitRunning(t, handoff.RoleLauncher, 1)
	workers := j.waitRunning(t, handoff.RoleWorker, 2)
	j.waitJobPhase(t, launcher, "Running")
	j.waitEvents(t, launcher, "MPIJobCreated", "MPIJobRunning")

	// A worker's container restarts: not ready meanwhile, then ready.
	restartContainer(t, ns, workers[1].Name)
	j.waitJobPhase(t, launcher, "Restarting")
	j.waitEvents(t, launcher, "MPIJobCreated", "MPIJobRunning", "MPIJobRestarting")
	setReady(t, ns, workers[1].Name, true)
	j.waitJobPhase(t, launcher, "Running")
	j.waitEvents(t, launcher, "MPIJobCreated", "MPIJobRunning", "MPIJobRestarting", "MPIJobRunning")

	finish(t, ns, j.waitRunning(t, handoff.RoleLauncher, 1)[0].Name, 0)
	j.waitJobPhase(t, launcher, "Succeeded")
	j.waitEvents(t, launcher, "MPIJobCreated", "MPIJobRunning", "MPIJobRestarting", "MPIJobRunning", "MPIJobSucceeded")
	want := map[string]float64{
		"trainfn_jobs_created_total": 1, "trainfn_jobs_restarted_total": 1,
		"trainfn_jobs_successful_total": 1, "trainfn_jobs_failed_total": 0,
		"trainfn_job_time_to_start_seconds": 1, // samples
	}
	r.waitMetrics(t, ns, "MPIJob", want)
	r.waitJobsGauge(t, ns, "MPIJob", "Succeeded")

	// A new reconciler finds every change recorded: nothing to announce.
	r.stop()
	r = startReconciler(t, ns)
	eventually(t, "the new reconciler's reconciles done", func(ctx context.Context) error {
		if n, err := r.metric(ctx, "controller_runtime_reconcile_total", "controller", "trainfn"); err != nil || n == 0 {
			return fmt.Errorf("%v reconciles done, %v", n, err)
		}
		return nil
	})
	r.waitJobsGauge(t, ns, "MPIJob", "Succeeded")
	for name := range want {
		want[name] = 0
	}
	r.waitMetrics(t, ns, "MPIJob", want)
	if err := j.checkEvents(launcher, "MPIJobCreated", "MPIJobRunning", "MPIJobRestarting", "MPIJobRunning", "MPIJobSucceeded"); err != nil {
		t.Error(err)
	}
	j.checkInvariants(t)
}

// TestJobPhaseSuspended holds a PyTorchJob suspended (runPolicy.suspend),
// then resumes its Jobs as Kueue admitting it would: Suspended, then
// Resumed.
func TestJobPhaseSuspended(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	j := deploy(t, ns, specString(`apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: held
spec:
  runPolicy:
    suspend: true
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
            command: [python, train.py]
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
            command: [python, train.py]
`))
	r := startReconciler(t, ns)
	first := j.name + "-master"
	j.waitJobPhase(t, first, "Pending")
	j.waitEvents(t, first, "PyTorchJobCreated", "PyTorchJobSuspended")

	ctx, cancel := timeout()
	defer cancel()
	jobs, err := kube.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(jobs.Items) < 2 {
		t.Fatalf("the job's Jobs: %d, %v", len(jobs.Items), err)
	}
	for _, w := range jobs.Items {
		_, err := kube.Client.BatchV1().Jobs(ns).Patch(ctx, w.Name, types.MergePatchType,
			[]byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{FieldManager: "kueue"})
		if err != nil {
			t.Fatalf("resuming Job %s: %v", w.Name, err)
		}
	}
	j.waitJobPhase(t, first, "Running")
	j.waitEvents(t, first, "PyTorchJobCreated", "PyTorchJobSuspended", "PyTorchJobResumed", "PyTorchJobRunning")
	r.waitMetrics(t, ns, "PyTorchJob", map[string]float64{"trainfn_jobs_created_total": 1, "trainfn_jobs_restarted_total": 0})
	r.waitJobsGauge(t, ns, "PyTorchJob", "Running")
}

// waitJobPhase waits until the reconciler records the job's phase on its
// Job of that name.
func (j *job) waitJobPhase(t *testing.T, name, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("phase %s on Job %s", want, name), func(ctx context.Context) error {
		w, err := kube.Client.BatchV1().Jobs(j.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := w.Annotations[handoff.Phase]; got != want {
			return fmt.Errorf("phase %q", got)
		}
		return nil
	})
}

// waitEvents waits until the reconciler's phase events on the Job of that
// name are exactly those given, in order; a series (an event repeated
// while its object did not change) shows as REASON×COUNT.
func (j *job) waitEvents(t *testing.T, name string, want ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("events %v on Job %s", want, name), func(context.Context) error {
		return j.checkEvents(name, want...)
	})
}

func (j *job) checkEvents(name string, want ...string) error {
	ctx, cancel := timeout()
	defer cancel()
	list, err := kube.Client.EventsV1().Events(j.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	events := slices.DeleteFunc(list.Items, func(e eventsv1.Event) bool {
		return e.Regarding.Kind != "Job" || e.Regarding.Name != name || e.ReportingController != handoff.FieldManager || e.Action != "RecordPhase"
	})
	slices.SortFunc(events, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	var got []string
	for _, e := range events {
		s := e.Reason
		if e.Series != nil {
			s += fmt.Sprintf("×%d", e.Series.Count)
		}
		wantType := corev1.EventTypeNormal
		if strings.HasSuffix(e.Reason, "Restarting") || strings.HasSuffix(e.Reason, "Failed") {
			wantType = corev1.EventTypeWarning
		}
		if e.Type != wantType || e.Note == "" {
			return fmt.Errorf("event %s is %s with note %q, want %s with the phase's message", e.Reason, e.Type, e.Note, wantType)
		}
		got = append(got, s)
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("events %v", got)
	}
	return nil
}

// waitMetrics waits until the reconciler's metrics of the kind in ns have
// the values given; a histogram's value is its count of samples.
func (r *replica) waitMetrics(t *testing.T, ns, kind string, want map[string]float64) {
	t.Helper()
	eventually(t, fmt.Sprintf("metrics %v", want), func(ctx context.Context) error {
		for name, n := range want {
			labels := []string{"namespace", ns, "kind", kind}
			if name == "trainfn_job_time_to_start_seconds" {
				labels = labels[2:]
			}
			got, err := r.metric(ctx, name, labels...)
			if err != nil {
				return err
			}
			if got != n {
				return fmt.Errorf("%s %v, want %v", name, got, n)
			}
		}
		return nil
	})
}

// waitJobsGauge waits until trainfn_jobs counts the one job of the kind in
// ns in that phase, and none in another.
func (r *replica) waitJobsGauge(t *testing.T, ns, kind, phase string) {
	t.Helper()
	eventually(t, "trainfn_jobs "+phase, func(ctx context.Context) error {
		for _, p := range []string{"Pending", "Starting", "Running", "Restarting", "Succeeded", "Failed"} {
			want := 0.0
			if p == phase {
				want = 1
			}
			got, err := r.metric(ctx, "trainfn_jobs", "namespace", ns, "kind", kind, "phase", p)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("trainfn_jobs{phase=%q} %v, want %v", p, got, want)
			}
		}
		return nil
	})
}

// restartContainer reports that a pod's container exited and was
// started again, not ready yet, as a kubelet does after a crash.
func restartContainer(t *testing.T, ns, pod string) {
	t.Helper()
	updateStatus(t, ns, pod, func(p *corev1.Pod) {
		for i, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady || c.Type == corev1.ContainersReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
				p.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
		}
		for i, c := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].Ready = false
			p.Status.ContainerStatuses[i].RestartCount++
			p.Status.ContainerStatuses[i].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "Error", StartedAt: startedAt(c), FinishedAt: metav1.Now(),
			}}
			p.Status.ContainerStatuses[i].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
		}
	})
}
