package phase

import (
	"cmp"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/trainfn/trainfn/render/handoff"
)

// workload is one Job or StatefulSet of a job, with the pods it owns.
type workload struct {
	obj        metav1.Object
	group      string // the API group of its kind: batch or apps
	kind, name string
	role       string
	job        *batchv1.Job // set when a Job
	// expected is how many live pods it should have now.
	expected int32
	// unset marks elastic workers whose first count the reconciler has not
	// set: expected is the count it will set.
	unset bool
	// pods are its live pods, owned those and the finished ones.
	pods, owned []*corev1.Pod
}

// workloadsOf pairs each of a job's workloads with its pods, in the order
// of their names.
func workloadsOf(objs Objects) []*workload {
	var ws []*workload
	for i := range objs.Jobs {
		j := &objs.Jobs[i]
		_, unset := firstCount(j)
		ws = append(ws, &workload{obj: j, group: batchv1.GroupName, kind: "Job", job: j, expected: jobExpected(j), unset: unset})
	}
	for i := range objs.StatefulSets {
		s := &objs.StatefulSets[i]
		n, unset := statefulSetExpected(s)
		ws = append(ws, &workload{obj: s, group: appsv1.GroupName, kind: "StatefulSet", expected: n, unset: unset})
	}
	for _, w := range ws {
		w.name, w.role = w.obj.GetName(), w.obj.GetLabels()[handoff.JobRoleLabel]
	}
	slices.SortStableFunc(ws, func(a, b *workload) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind))
	})
	for i := range objs.Pods {
		p := &objs.Pods[i]
		for _, w := range ws {
			if w.owns(p) {
				w.owned = append(w.owned, p)
				if live(p) {
					w.pods = append(w.pods, p)
				}
			}
		}
	}
	return ws
}

// owns tells whether the workload is the pod's controller. The UID is
// compared when the workload has one, so that the pods of a workload
// deleted and applied again under the same name do not count.
func (w *workload) owns(p *corev1.Pod) bool {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil || ref.Kind != w.kind || ref.Name != w.name {
		return false
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != w.group {
		return false
	}
	return w.obj.GetUID() == "" || ref.UID == w.obj.GetUID()
}

// count is the workload's share of a Summary.
func (w *workload) count() Workload {
	c := Workload{Kind: w.kind, Name: w.name, Role: w.role, Expected: w.expected, Pods: int32(len(w.pods))}
	for _, p := range w.pods {
		if ready, _ := Ready(p); ready {
			c.Ready++
		}
		c.Restarts += restartsOf(p)
	}
	// Pods past the count, a StatefulSet's being scaled down, say, are
	// not wanted and do not make up for missing ones.
	c.Ready = min(c.Ready, w.expected)
	if w.job != nil {
		c.Restarts += w.job.Status.Failed
	}
	return c
}

// jobExpected is how many pods a Job should have running now: none once it
// is done; else its parallelism (for elastic workers the reconciler has not
// scaled yet, the count it will scale them to) less the pods that
// succeeded, within the completions left.
func jobExpected(j *batchv1.Job) int32 {
	if o, _ := JobOutcome(j); o == Succeeded {
		return 0
	}
	n := int32(1) // the API's default parallelism
	if first, ok := firstCount(j); ok {
		n = first
	} else if j.Spec.Parallelism != nil {
		n = *j.Spec.Parallelism
	}
	if j.Spec.Completions != nil {
		n = min(n, *j.Spec.Completions-j.Status.Succeeded)
	} else {
		n -= j.Status.Succeeded
	}
	return max(n, 0)
}

// statefulSetExpected is how many pods a StatefulSet should have: its
// replicas, or, for an elastic one the reconciler has not scaled yet, the
// count it will scale it to. unset is true in that case, and when the
// replicas are not set at all.
func statefulSetExpected(s *appsv1.StatefulSet) (n int32, unset bool) {
	if first, ok := firstCount(s); ok {
		return first, true
	}
	if s.Spec.Replicas == nil {
		return 0, true
	}
	return *s.Spec.Replicas, false
}

// firstCount is the count elastic workers start with, while the reconciler
// has not set it yet.
func firstCount(workers metav1.Object) (int32, bool) {
	a := workers.GetAnnotations()
	_, elastic := a[handoff.ElasticWorkers]
	_, scaled := a[handoff.ScaledFrom]
	if !elastic || scaled {
		return 0, false
	}
	first, err := strconv.ParseInt(a[handoff.Workers], 10, 32)
	return int32(first), err == nil && first >= 0
}

// Replicas is a StatefulSet's desired count, with the API's default.
func Replicas(s *appsv1.StatefulSet) int32 {
	if s.Spec.Replicas == nil {
		return 1
	}
	return *s.Spec.Replicas
}

// suspended is the first Job not done that is suspended, if any.
func suspended(ws []*workload) *workload {
	for _, w := range ws {
		if w.job != nil && w.expected > 0 && w.job.Spec.Suspend != nil && *w.job.Spec.Suspend {
			return w
		}
	}
	return nil
}
