package diserver

import (
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
)

// addresses is each rank's "ip:port", rank r at position r, as
// DI-orchestrator answers: a caller reads the address of a rank by its
// position. A rank whose pod has no IP yet (pending, or not even created)
// is the empty string, so that the ranks after it keep their positions;
// pods that have finished or are being deleted give no address.
func addresses(j *diJob, pods []corev1.Pod) []string {
	out := make([]string, j.ranks())
	chosen := make([]*corev1.Pod, len(out))
	for _, w := range j.workloads {
		for i := range pods {
			p := &pods[i]
			index, ok := indexIn(w, p)
			if !ok || index >= w.expected() || !serving(p) {
				continue
			}
			rank := w.firstRank + index
			if better(p, chosen[rank]) {
				chosen[rank] = p
			}
		}
	}
	for rank, p := range chosen {
		if p != nil && p.Status.PodIP != "" {
			out[rank] = net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(diPort(&p.Spec))))
		}
	}
	return out
}

// indexIn is a pod's index in a workload, if the workload controls it.
func indexIn(w workload, p *corev1.Pod) (int32, bool) {
	owner := metav1.GetControllerOf(p)
	if owner == nil || owner.UID != w.object.GetUID() {
		return 0, false
	}
	var value string
	switch w.object.(type) {
	case *batchv1.Job:
		value = p.Labels[batchv1.JobCompletionIndexAnnotation]
	case *appsv1.StatefulSet:
		var ok bool
		if value, ok = p.Labels[appsv1.PodIndexLabel]; !ok {
			// Before Kubernetes 1.28 the ordinal is only in the name.
			value = strings.TrimPrefix(p.Name, w.object.GetName()+"-")
		}
	}
	index, err := strconv.ParseInt(value, 10, 32)
	if err != nil || index < 0 {
		return 0, false
	}
	return int32(index), true
}

// serving tells whether a pod is, or may become, a rank's worker.
func serving(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// better tells whether p should stand for its rank rather than current: a
// Job may briefly hold a failed index's replacement beside it, and a pod
// with an address beats one without.
func better(p, current *corev1.Pod) bool {
	switch {
	case current == nil:
		return true
	case (p.Status.PodIP != "") != (current.Status.PodIP != ""):
		return p.Status.PodIP != ""
	}
	return current.CreationTimestamp.Before(&p.CreationTimestamp)
}

// diPort is the port DI-engine listens on in a pod: its container port
// named handoff.DIPortName, else DI-engine's default.
func diPort(spec *corev1.PodSpec) int32 {
	for _, c := range spec.Containers {
		for _, port := range c.Ports {
			if port.Name == handoff.DIPortName {
				return port.ContainerPort
			}
		}
	}
	return handoff.DIPort
}

// workerHosts is "host:port" of a StatefulSet's workers of ordinals
// [from, to), by their stable hostnames: the addresses of workers just
// added, which have no IP yet, or just removed.
func workerHosts(job string, s *appsv1.StatefulSet, from, to int32) []string {
	port := strconv.Itoa(int(diPort(&s.Spec.Template.Spec)))
	out := make([]string, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		hostname := s.Name + "-" + strconv.Itoa(int(i))
		out = append(out, net.JoinHostPort(handoff.DNSName(job, hostname), port))
	}
	return out
}
