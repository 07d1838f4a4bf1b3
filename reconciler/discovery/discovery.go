// Package discovery computes an elastic MPIJob's host discovery script
// (Horovod's --host-discovery-script, as mpi-operator's elastic Horovod
// proposal uses it) from the job's live pods: one line per pod that can
// take work now, in the format the render asked for, the launcher first when it also works, then the
// workers in index order.
package discovery

import (
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// Job is what discovery needs to know of a job.
type Job struct {
	// Workers are the pods of the workers' StatefulSet or Indexed Job, in
	// any order.
	Workers []corev1.Pod
	// Replicas is the workers' desired count: a worker at or above it is
	// being scaled away and gets no more work.
	Replicas int32
	// SlotsPerWorker is each worker's line's slots.
	SlotsPerWorker int32
	// Launcher is the launcher's pod, which heads the hosts with
	// LauncherSlots when LauncherWorks.
	Launcher      *corev1.Pod
	LauncherWorks bool
	LauncherSlots int32
}

// Host is one discovered host, and when its pod last became ready, to the
// second the API keeps.
type Host struct {
	handoff.Host
	ReadySince time.Time
}

// Hosts are the job's hosts that can take work now, in the script's order.
func Hosts(j Job) []Host {
	var hosts []Host
	if j.Launcher != nil && j.LauncherWorks {
		if works, since := Works(j.Launcher); works {
			hosts = append(hosts, Host{Host: handoff.Host{Name: HostName(j.Launcher), Slots: j.LauncherSlots}, ReadySince: since})
		}
	}
	type indexed struct {
		index int
		pod   *corev1.Pod
		since time.Time
	}
	var workers []indexed
	for i := range j.Workers {
		p := &j.Workers[i]
		index, ok := Index(p)
		if !ok || index >= int(j.Replicas) {
			continue
		}
		if works, since := Works(p); works {
			workers = append(workers, indexed{index, p, since})
		}
	}
	slices.SortFunc(workers, func(a, b indexed) int { return a.index - b.index })
	for _, w := range workers {
		hosts = append(hosts, Host{Host: handoff.Host{Name: HostName(w.pod), Slots: j.SlotsPerWorker}, ReadySince: w.since})
	}
	return hosts
}

// Script is the discovery script for the hosts, in the format the render
// asked for.
func Script(hosts []Host, format handoff.DiscoverFormat) string {
	plain := make([]handoff.Host, len(hosts))
	for i, h := range hosts {
		plain[i] = h.Host
	}
	return handoff.DiscoverHosts(plain, format)
}

// Listed are the hosts a discovery script names.
func Listed(script string) map[string]bool {
	hosts := map[string]bool{}
	for _, h := range handoff.ParseDiscoverHosts(script) {
		hosts[h.Name] = true
	}
	return hosts
}

// Works tells whether a pod can take work now, and since when: it runs,
// every container is ready (a worker's readiness probe says when sshd
// accepts connections), and it is not being deleted.
func Works(p *corev1.Pod) (works bool, since time.Time) {
	if p.DeletionTimestamp != nil {
		return false, time.Time{}
	}
	return phase.Ready(p)
}

// HostName is the name other pods of the job reach a pod by: its hostname
// under the job's Service, as the rendered hostfile writes it.
func HostName(p *corev1.Pod) string {
	host := p.Spec.Hostname
	if host == "" {
		host = p.Name
	}
	if p.Spec.Subdomain != "" {
		host += "." + p.Spec.Subdomain
	}
	return host
}

// Index is a worker pod's index: an Indexed Job pod's completion index
// (label, or annotation before Kubernetes 1.28), or a StatefulSet pod's
// ordinal, the label the StatefulSet controller sets, else the suffix of
// the pod's name.
func Index(p *corev1.Pod) (int, bool) {
	s, ok := p.Labels[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		s, ok = p.Annotations[batchv1.JobCompletionIndexAnnotation]
	}
	if !ok {
		s, ok = p.Labels[appsv1.PodIndexLabel]
	}
	if !ok {
		i := strings.LastIndexByte(p.Name, '-')
		if i < 0 {
			return 0, false
		}
		s = p.Name[i+1:]
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}
