package diserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func jobOf(objs ...workload) *diJob { return &diJob{id: JobID{"ns", "j", 1}, workloads: objs} }

func TestAddressesInRankOrderAcrossWorkloads(t *testing.T) {
	collector := taskJob("j", "collector", 1, 0, 2)
	learner := taskJob("j", "learner", 1, 2, 1)
	j := jobOf(workload{object: collector, firstRank: 0}, workload{object: learner, firstRank: 2})
	pods := []corev1.Pod{
		podOf(learner, "Job", 0, "10.0.0.9"),
		podOf(collector, "Job", 1, "10.0.0.2"),
		podOf(collector, "Job", 0, "10.0.0.1"),
	}
	require.Equal(t, []string{"10.0.0.1:22270", "10.0.0.2:22270", "10.0.0.9:22270"}, addresses(j, pods))
}

func TestAddressesKeepPositionsOfPodsWithoutAnIP(t *testing.T) {
	s := workerSet("j", 1, 4)
	j := jobOf(workload{object: s})
	pods := []corev1.Pod{podOf(s, "StatefulSet", 0, "10.0.0.1"), podOf(s, "StatefulSet", 1, ""), podOf(s, "StatefulSet", 3, "10.0.0.4")}
	require.Equal(t, []string{"10.0.0.1:22270", "", "", "10.0.0.4:22270"}, addresses(j, pods),
		"a pending pod and a pod not yet created leave their ranks empty")
}

func TestAddressesSkipPodsThatDoNotServe(t *testing.T) {
	s := workerSet("j", 1, 3)
	other := workerSet("other", 1, 3)
	other.UID = "someone else's"
	j := jobOf(workload{object: s})
	finished := podOf(s, "StatefulSet", 0, "10.0.0.1")
	finished.Status.Phase = corev1.PodFailed
	leaving := podOf(s, "StatefulSet", 1, "10.0.0.2")
	leaving.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	scaledAway := podOf(s, "StatefulSet", 3, "10.0.0.4")
	foreign := podOf(other, "StatefulSet", 2, "10.0.0.3")
	require.Equal(t, []string{"", "", ""}, addresses(j, []corev1.Pod{finished, leaving, scaledAway, foreign}))
}

func TestAddressesPreferAPodWithAnIPThenTheNewest(t *testing.T) {
	w := taskJob("j", "worker", 1, 0, 1)
	j := jobOf(workload{object: w})
	old := podOf(w, "Job", 0, "10.0.0.1")
	old.CreationTimestamp = metav1.Unix(100, 0)
	replacement := podOf(w, "Job", 0, "")
	replacement.CreationTimestamp = metav1.Unix(200, 0)
	require.Equal(t, []string{"10.0.0.1:22270"}, addresses(j, []corev1.Pod{replacement, old}))
	newer := podOf(w, "Job", 0, "10.0.0.2")
	newer.CreationTimestamp = metav1.Unix(300, 0)
	require.Equal(t, []string{"10.0.0.2:22270"}, addresses(j, []corev1.Pod{old, newer, replacement}))
}

func TestAddressesUseTheNamedDIPort(t *testing.T) {
	s := workerSet("j", 1, 1)
	p := podOf(s, "StatefulSet", 0, "fd00::1")
	p.Spec.Containers = []corev1.Container{{Name: "di", Ports: []corev1.ContainerPort{
		{Name: "metrics", ContainerPort: 9090}, {Name: "di-port", ContainerPort: 23000}}}}
	require.Equal(t, []string{"[fd00::1]:23000"}, addresses(jobOf(workload{object: s}), []corev1.Pod{p}))
}

func TestAddressesReadTheOrdinalFromTheNameWithoutTheIndexLabel(t *testing.T) {
	s := workerSet("j", 1, 2)
	p := podOf(s, "StatefulSet", 1, "10.0.0.2")
	delete(p.Labels, appsv1.PodIndexLabel)
	require.Equal(t, []string{"", "10.0.0.2:22270"}, addresses(jobOf(workload{object: s}), []corev1.Pod{p}))
}

func TestWorkerHosts(t *testing.T) {
	s := workerSet("cartpole", 1, 3)
	require.Equal(t, []string{"cartpole-worker-3.cartpole:22270", "cartpole-worker-4.cartpole:22270"}, workerHosts("cartpole", s, 3, 5))
	require.Empty(t, workerHosts("cartpole", s, 3, 3))
	s.Spec.Template.Spec.Containers = []corev1.Container{{Ports: []corev1.ContainerPort{{Name: "di-port", ContainerPort: 23000}}}}
	require.Equal(t, []string{"cartpole-worker-0.cartpole:23000"}, workerHosts("cartpole", s, 0, 1))
}
