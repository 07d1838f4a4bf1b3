package diserver

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/render/handoff"
)

// The objects of the unit tests: a DIJob's workloads, as the render marks
// them, and their pods, as their controllers make them.

// diLabels are the labels of a DIJob's workload.
func diLabels(job string) map[string]string {
	l := handoff.RoleLabels(job, handoff.RoleWorker)
	l[handoff.KindLabel] = handoff.DIJobKind
	return l
}

func diAnnotations(generation int64, firstRank int32, extra ...string) map[string]string {
	a := map[string]string{
		handoff.DIJobGeneration: strconv.FormatInt(generation, 10),
		handoff.FirstRank:       strconv.Itoa(int(firstRank)),
	}
	for i := 0; i+1 < len(extra); i += 2 {
		a[extra[i]] = extra[i+1]
	}
	return a
}

func workerSet(job string, generation int64, replicas int32, extra ...string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job + "-worker", UID: types.UID(job + "-worker"),
			Labels: diLabels(job), Annotations: diAnnotations(generation, 0, extra...)},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)},
	}
}

func taskJob(job, task string, generation int64, firstRank, parallelism int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: job + "-" + task, UID: types.UID(job + "-" + task),
			Labels: diLabels(job), Annotations: diAnnotations(generation, firstRank)},
		Spec: batchv1.JobSpec{Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism)},
	}
}

// podOf is a running pod of a workload at an index, with an IP when ip is
// not empty.
func podOf(owner metav1.Object, kind string, index int, ip string) corev1.Pod {
	name := owner.GetName() + "-" + strconv.Itoa(index)
	l := handoff.RoleLabels(owner.GetLabels()[handoff.JobNameLabel], handoff.RoleWorker)
	if kind == "Job" {
		name += "-x"
		l[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(index)
	} else {
		l[appsv1.PodIndexLabel] = strconv.Itoa(index)
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: l, UID: types.UID(name),
			OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
}
