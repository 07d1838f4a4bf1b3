//go:build e2e

package diserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// The objects a DIJob renders into, as they are once applied and once the
// reconciler has set a preemptible job's first count.

// preemptible describes a preemptible DIJob's worker StatefulSet.
type preemptible struct {
	name       string
	generation int
	bounds     string // MIN:MAX
	replicas   int32
	// starting leaves out the reconciler's mark that it set the first
	// count: the job has just been applied.
	starting bool
}

func (p preemptible) create(t *testing.T, ns string) *appsv1.StatefulSet {
	t.Helper()
	a := diAnnotations(p.generation, 0)
	a[handoff.ElasticWorkers] = p.bounds
	if !p.starting {
		a[handoff.ScaledFrom] = strconv.Itoa(int(p.replicas))
	}
	role := handoff.RoleLabels(p.name, handoff.RoleWorker)
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.name + "-worker", Labels: diLabels(p.name), Annotations: a},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(p.replicas),
			ServiceName:         p.name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: role},
			Template:            podTemplate(role, corev1.RestartPolicyAlways),
		},
	}
	create(t, s)
	return s
}

// task describes one task of a task-shaped DIJob: an Indexed Job.
type task struct {
	job, name   string
	generation  int
	firstRank   int
	parallelism int32
}

func (k task) create(t *testing.T, ns string) *batchv1.Job {
	t.Helper()
	role := handoff.RoleLabels(k.job, handoff.RoleWorker)
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: k.job + "-" + k.name, Labels: diLabels(k.job),
			Annotations: diAnnotations(k.generation, k.firstRank)},
		Spec: batchv1.JobSpec{
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    ptr.To(k.parallelism),
			Parallelism:    ptr.To(k.parallelism),
			Template:       podTemplate(role, corev1.RestartPolicyNever),
		},
	}
	create(t, j)
	return j
}

// diLabels are the labels the render gives a DIJob's workloads.
func diLabels(job string) map[string]string {
	l := handoff.RoleLabels(job, handoff.RoleWorker)
	l[handoff.KindLabel] = handoff.DIJobKind
	return l
}

func diAnnotations(generation, firstRank int) map[string]string {
	return map[string]string{
		handoff.DIJobGeneration: strconv.Itoa(generation),
		handoff.FirstRank:       strconv.Itoa(firstRank),
	}
}

func podTemplate(l map[string]string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec: corev1.PodSpec{
			RestartPolicy: restart,
			Containers: []corev1.Container{{
				Name: "di-engine", Image: "opendilab/di-engine:fake",
				Ports: []corev1.ContainerPort{{Name: handoff.DIPortName, ContainerPort: handoff.DIPort}},
			}},
		},
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	if err := live.Create(ctx, obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// get reads obj again, live.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	if err := live.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("reading %s: %v", obj.GetName(), err)
	}
}

// podsOf are a workload's running pods with an IP, by index, and how many
// pods it has in all.
func podsOf(ctx context.Context, w client.Object) (map[int]corev1.Pod, int, error) {
	var pods corev1.PodList
	if err := live.List(ctx, &pods, client.InNamespace(w.GetNamespace()),
		client.MatchingLabels(handoff.JobLabels(w.GetLabels()[handoff.JobNameLabel]))); err != nil {
		return nil, 0, err
	}
	up, all := map[int]corev1.Pod{}, 0
	for _, p := range pods.Items {
		owner := metav1.GetControllerOf(&p)
		if owner == nil || owner.UID != w.GetUID() {
			continue
		}
		all++
		index, ok := p.Labels[batchv1.JobCompletionIndexAnnotation]
		if !ok {
			index = p.Labels[appsv1.PodIndexLabel]
		}
		i, err := strconv.Atoi(index)
		if err != nil {
			return nil, 0, fmt.Errorf("pod %s has no index: %w", p.Name, err)
		}
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			up[i] = p
		}
	}
	return up, all, nil
}

// waitPods waits until a workload runs exactly n pods, all with an IP, and
// returns "ip:port" of each, by index.
func waitPods(t *testing.T, w client.Object, n int) []string {
	t.Helper()
	var addrs []string
	eventually(t, fmt.Sprintf("%s runs %d pods", w.GetName(), n), func(ctx context.Context) error {
		up, all, err := podsOf(ctx, w)
		if err != nil {
			return err
		}
		if len(up) != n || all != n {
			return fmt.Errorf("%d pods, %d of them running with an IP", all, len(up))
		}
		addrs = addrs[:0]
		for i := range n {
			p, ok := up[i]
			if !ok {
				return fmt.Errorf("no running pod of index %d", i)
			}
			addrs = append(addrs, p.Status.PodIP+":"+strconv.Itoa(handoff.DIPort))
		}
		return nil
	})
	return slices.Clone(addrs)
}
