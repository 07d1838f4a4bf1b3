//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/trainfn/trainfn/render/handoff"
)

// elasticMPIJob is the job the elastic scenarios change: it starts with 2
// workers of 2 slots and may have from 1 to 4.
var elasticMPIJob = mpiJob{Name: "elastic", Elastic: "1:4", Workers: 2, Slots: 2, CleanPodPolicy: "Running"}

// startElastic applies the elastic job to a namespace of the test's own,
// starts a reconciler there, and waits until the reconciler has started
// the job's workers and discovered them.
func startElastic(t *testing.T, flags ...string) (*job, *replica) {
	t.Helper()
	ns := kube.Namespace(t)
	j := deploy(t, ns, elasticMPIJob)
	r := startReconciler(t, ns, flags...)
	j.waitReplicas(t, 2)
	j.waitDiscovery(t, 0, 1)
	return j, r
}

func TestScaleUp(t *testing.T) {
	t.Parallel()
	j, _ := startElastic(t)
	j.keep(t, 2)
	j.scale(t, 4)
	j.waitDiscovery(t, 0, 1, 2, 3)
	j.waitReplicas(t, 4)
	// The reconciler sets the first count once; later ones are the
	// scaler's.
	ctx, cancel := timeout()
	defer cancel()
	s, err := j.statefulSet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Annotations[handoff.ScaledFrom]; got != "2" {
		t.Errorf("annotation %s is %q, want 2", handoff.ScaledFrom, got)
	}
	j.checkInvariants(t)
}

func TestScaleDown(t *testing.T) {
	t.Parallel()
	j, _ := startElastic(t)
	j.scale(t, 4)
	j.waitDiscovery(t, 0, 1, 2, 3)
	j.keep(t, 2)
	leaving := []*corev1.Pod{j.pod(t, j.worker(2)), j.pod(t, j.worker(3))}
	undeletable(t, j.ns, leaving[0].Name, leaving[1].Name)
	j.scale(t, 2)
	j.waitDiscovery(t, 0, 1)
	// Discovery dropped the workers scaled away while they still ran,
	// ready and not even terminating: Horovod stops giving them work
	// before they go.
	for _, p := range leaving {
		if now := j.pod(t, p.Name); now.UID != p.UID || !running(now) || !ready(now) {
			t.Errorf("pod %s stopped before discovery dropped it", p.Name)
		}
		deletable(t, j.ns, p.Name)
	}
	for _, p := range leaving {
		waitGone(t, j.ns, p.Name, string(p.UID))
	}
	j.waitDiscovery(t, 0, 1)
	j.checkInvariants(t)
}

func TestOutOfBounds(t *testing.T) {
	t.Parallel()
	j, r := startElastic(t)
	j.keep(t, 2)
	j.scale(t, 9)
	j.waitReplicas(t, 4)
	j.waitDiscovery(t, 0, 1, 2, 3)
	eventually(t, "only workers 0 to 3", func(ctx context.Context) error {
		pods, err := j.pods(ctx, handoff.RoleWorker)
		if err != nil {
			return err
		}
		if len(pods) != 4 {
			return fmt.Errorf("worker pods %s", describe(pods))
		}
		return nil
	})
	j.checkInvariants(t)

	// Below the minimum, the StatefulSet controller may remove every
	// worker before the count is back at 1: none is kept any more.
	clear(j.kept)
	j.scale(t, 0)
	j.waitReplicas(t, 1)
	j.waitDiscovery(t, 0)
	for _, reason := range []string{"AboveMaximum", "BelowMinimum"} {
		eventually(t, "a scale counted as "+reason, func(ctx context.Context) error {
			n, err := r.metric(ctx, "trainfn_scales_total", "reason", reason)
			if err == nil && n < 1 {
				err = fmt.Errorf("trainfn_scales_total{reason=%q} is %v", reason, n)
			}
			return err
		})
	}
	j.checkInvariants(t)
}

func TestPodDeleted(t *testing.T) {
	t.Parallel()
	j, _ := startElastic(t)
	j.keep(t, 1)
	name := j.worker(1)
	hold(t, j.ns, name)
	old := j.pod(t, name)
	ctx, cancel := timeout()
	defer cancel()
	if err := kube.Client.CoreV1().Pods(j.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	j.waitDiscovery(t, 0)
	release(t, j.ns, name)
	waitGone(t, j.ns, name, string(old.UID))
	// The StatefulSet controller makes the pod again, under the same name.
	j.waitDiscovery(t, 0, 1)
	if p := j.pod(t, name); p.UID == old.UID {
		t.Errorf("pod %s is the deleted one", name)
	}
	j.checkInvariants(t)
}

func TestPodNotReady(t *testing.T) {
	t.Parallel()
	j, _ := startElastic(t)
	j.keep(t, 2)
	setReady(t, j.ns, j.worker(1), false)
	j.waitDiscovery(t, 0)
	setReady(t, j.ns, j.worker(1), true)
	j.waitDiscovery(t, 0, 1)
	// A gap at the front: the hosts after it keep their order.
	setReady(t, j.ns, j.worker(0), false)
	j.waitDiscovery(t, 1)
	setReady(t, j.ns, j.worker(0), true)
	j.waitDiscovery(t, 0, 1)
	j.checkInvariants(t)
}

func TestLauncherWorksFirst(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	spec := elasticMPIJob
	spec.LauncherWorks = true
	j := deploy(t, ns, spec)
	startReconciler(t, ns)
	j.waitDiscovery(t, launcher, 0, 1)
	j.keep(t, 2)
	j.scale(t, 3)
	j.waitDiscovery(t, launcher, 0, 1, 2)
	j.checkInvariants(t)
}

// An elastic MPIJob of no slots per worker, which mpi-operator accepts and
// trainfn renders as it does, gets its discovery script all the same, each
// host with the 0 slots the rendered hostfile gives it.
func TestNoSlotsPerWorker(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	spec := elasticMPIJob
	spec.Name, spec.Slots, spec.LauncherWorks = "no-slots", 0, true
	j := deploy(t, ns, spec)
	startReconciler(t, ns)
	j.waitDiscovery(t, launcher, 0, 1)
	j.checkInvariants(t)
}

// TestOutOfBoundsUnderKueue keeps an elastic MPIJob rendered for Kueue
// within its bounds: its workers are then an Indexed Job, rendered without
// parallelism, which the reconciler sets to the job's first count once the
// Job is no longer held suspended, as Kueue holds it until it admits it,
// and brings back within the bounds; the discovery script follows its
// workers.
func TestOutOfBoundsUnderKueue(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	j := deploy(t, ns, stringer(underKueue(elasticMPIJob.String())))
	workers := kube.Client.BatchV1().Jobs(ns)
	patch := func(what, patch string) {
		t.Helper()
		ctx, cancel := timeout()
		defer cancel()
		if _, err := workers.Patch(ctx, j.name+"-worker", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	resize := func(n int) {
		t.Helper()
		patch(fmt.Sprintf("resizing the workers to %d", n), fmt.Sprintf(`{"spec":{"parallelism":%d}}`, n))
	}
	patch("suspending the workers' Job, as Kueue's webhook does", `{"spec":{"suspend":true}}`)
	startReconciler(t, ns)
	// The discovery script is written whatever the count: once it is,
	// the reconciler has seen the Job.
	eventually(t, "the discovery script written", func(ctx context.Context) error {
		cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, j.name+"-config", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := cm.Data["discover_hosts.sh"]; !ok {
			return fmt.Errorf("no discover_hosts.sh")
		}
		return nil
	})
	ctx, cancel := timeout()
	defer cancel()
	held, err := workers.Get(ctx, j.name+"-worker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := replicasOf(held.Spec.Parallelism); p != "1" {
		t.Fatalf("the reconciler set the count of a suspended Job: parallelism %s", p)
	}
	patch("resuming the workers' Job, as Kueue does when it admits it", `{"spec":{"suspend":false}}`)
	within := func(n int32, hosts int) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d workers asked for and %d discovered", n, hosts), func(ctx context.Context) error {
			w, err := workers.Get(ctx, j.name+"-worker", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p := replicasOf(w.Spec.Parallelism); p != fmt.Sprint(n) {
				return fmt.Errorf("parallelism %s", p)
			}
			cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(ctx, j.name+"-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := strings.Count(cm.Data["discover_hosts.sh"], j.name+"-worker-"); got != hosts {
				return fmt.Errorf("the discovery script lists %d workers:\n%s", got, cm.Data["discover_hosts.sh"])
			}
			return nil
		})
	}
	within(2, 2)
	resize(9)
	within(4, 4)
	resize(0)
	within(1, 1)
}

// underKueue is an elastic MPIJob's spec queued on Kueue's LocalQueue
// "jobs". The suite runs no Kueue: the workers' Job's Kueue label and
// annotation are for Kueue alone, and the reconciler's part is the same
// with or without it.
func underKueue(spec string) string {
	spec = strings.Replace(spec, "  annotations:\n", "  annotations:\n    trainfn.dev/gang-scheduler: Kueue\n", 1)
	return strings.Replace(spec, "  runPolicy:\n", "  runPolicy:\n    schedulingPolicy:\n      queue: jobs\n", 1)
}

// stringer is a spec already written.
type stringer string

func (s stringer) String() string { return string(s) }
