package status

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Selecting keeps, of the jobs l lists, those whose workloads match
// selector (kubectl's -l). The job's own labels are on its workloads
// only, not on its pods, which therefore are all listed: a pod of a job
// not selected has no workload to join, and no job is made of it.
func Selecting(l Lister, selector labels.Selector) Lister {
	if selector == nil || selector.Empty() {
		return l
	}
	return &selecting{Lister: l, selector: selector}
}

type selecting struct {
	Lister
	selector labels.Selector
}

func (s *selecting) ListJobs(ctx context.Context, namespace string, selector map[string]string) ([]batchv1.Job, error) {
	jobs, err := s.Lister.ListJobs(ctx, namespace, selector)
	out := jobs[:0]
	for _, j := range jobs {
		if s.selector.Matches(labels.Set(j.Labels)) {
			out = append(out, j)
		}
	}
	return out, err
}

func (s *selecting) ListStatefulSets(ctx context.Context, namespace string, selector map[string]string) ([]appsv1.StatefulSet, error) {
	sets, err := s.Lister.ListStatefulSets(ctx, namespace, selector)
	out := sets[:0]
	for _, set := range sets {
		if s.selector.Matches(labels.Set(set.Labels)) {
			out = append(out, set)
		}
	}
	return out, err
}

// ListPods lists every pod: see Selecting.
func (s *selecting) ListPods(ctx context.Context, namespace string, selector map[string]string) ([]corev1.Pod, error) {
	return s.Lister.ListPods(ctx, namespace, selector)
}
