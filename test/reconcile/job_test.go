//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/trainfn/trainfn/render/handoff"
)

// job is one rendered job, applied to a test's namespace, and what the
// test promised itself about it: the worker pods that must never be
// deleted, and the Secrets the user supplied, as they were.
type job struct {
	ns, name string
	objs     []*unstructured.Unstructured // as rendered
	kept     map[string]types.UID         // worker pods by name
	secrets  []*corev1.Secret
}

// deploy renders a job spec and applies the output as GitOps would.
func deploy(t *testing.T, ns string, spec fmt.Stringer) *job {
	t.Helper()
	objs := render(t, spec.String())
	ctx, cancel := timeout()
	defer cancel()
	if err := apply(ctx, ns, gitOps, true, objs); err != nil {
		t.Fatalf("applying the rendered job: %v", err)
	}
	var name string
	for _, obj := range objs {
		if n, ok := obj.GetLabels()[handoff.JobNameLabel]; ok {
			name = n
		}
	}
	return &job{ns: ns, name: name, objs: objs, kept: map[string]types.UID{}}
}

// specString lets a job spec written as YAML be deployed.
type specString string

func (s specString) String() string { return string(s) }

// statefulSet is the job's worker StatefulSet, live.
func (j *job) statefulSet(ctx context.Context) (*appsv1.StatefulSet, error) {
	return kube.Client.AppsV1().StatefulSets(j.ns).Get(ctx, j.name+"-worker", metav1.GetOptions{})
}

// pods are the job's live pods of a role.
func (j *job) pods(ctx context.Context, role string) ([]corev1.Pod, error) {
	list, err := kube.Client.CoreV1().Pods(j.ns).List(ctx, metav1.ListOptions{
		LabelSelector: k8slabels.SelectorFromSet(handoff.RoleLabels(j.name, role)).String(),
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// worker is the name of an elastic job's worker pod.
func (j *job) worker(i int) string { return j.name + "-worker-" + strconv.Itoa(i) }

// scale changes the worker count as `kubectl scale` does, through the
// StatefulSet's scale subresource, as a user or an autoscaler would.
func (j *job) scale(t *testing.T, replicas int32) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	sets := kube.Client.AppsV1().StatefulSets(j.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := sets.GetScale(ctx, j.name+"-worker", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = replicas
		_, err = sets.UpdateScale(ctx, j.name+"-worker", scale, metav1.UpdateOptions{FieldManager: "kubectl-scale"})
		return err
	})
	if err != nil {
		t.Fatalf("scaling %s to %d: %v", j.name, replicas, err)
	}
}

// waitReplicas waits until the worker StatefulSet asks for n workers.
func (j *job) waitReplicas(t *testing.T, n int32) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d worker replicas", n), func(ctx context.Context) error {
		s, err := j.statefulSet(ctx)
		if err != nil {
			return err
		}
		if s.Spec.Replicas == nil || *s.Spec.Replicas != n {
			return fmt.Errorf("spec.replicas %v, annotations %v", replicasOf(s.Spec.Replicas), s.Annotations)
		}
		return nil
	})
}

// keep records the worker pods below an index, which from now on must
// never be deleted.
func (j *job) keep(t *testing.T, below int) {
	t.Helper()
	for i := range below {
		p := j.pod(t, j.worker(i))
		j.kept[p.Name] = p.UID
	}
}

// pod reads a pod of the job's namespace.
func (j *job) pod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	p, err := kube.Client.CoreV1().Pods(j.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading pod %s: %v", name, err)
	}
	return p
}

// replicasOf shows a StatefulSet's spec.replicas.
func replicasOf(p *int32) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(int(*p))
}

func (j *job) liveStatefulSet(t *testing.T) *appsv1.StatefulSet {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	s, err := j.statefulSet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitRunning waits until n pods of a role run and are ready, and returns
// them in index order.
func (j *job) waitRunning(t *testing.T, role string, n int) []corev1.Pod {
	t.Helper()
	var up []corev1.Pod
	eventually(t, fmt.Sprintf("%d %s pods running", n, role), func(ctx context.Context) error {
		pods, err := j.pods(ctx, role)
		if err != nil {
			return err
		}
		up = slices.DeleteFunc(pods, func(p corev1.Pod) bool { return !running(&p) || !ready(&p) })
		if len(up) != n {
			return fmt.Errorf("pods %s", describe(pods))
		}
		return nil
	})
	slices.SortFunc(up, func(a, b corev1.Pod) int { return podIndex(a) - podIndex(b) })
	return up
}

func podIndex(p corev1.Pod) int {
	for _, key := range []string{batchv1.JobCompletionIndexAnnotation, appsv1.PodIndexLabel} {
		if i, err := strconv.Atoi(p.Labels[key]); err == nil {
			return i
		}
	}
	return -1
}

// waitPods waits until the pods of a role are exactly those described, as
// describe writes them.
func (j *job) waitPods(t *testing.T, role string, want ...string) {
	t.Helper()
	expected := "[" + strings.Join(want, " ") + "]"
	eventually(t, fmt.Sprintf("%s pods %s", role, expected), func(ctx context.Context) error {
		pods, err := j.pods(ctx, role)
		if err != nil {
			return err
		}
		if got := describe(pods); got != expected {
			return fmt.Errorf("pods %s", got)
		}
		return nil
	})
}
