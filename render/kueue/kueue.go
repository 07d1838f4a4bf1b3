// Package kueue names the keys Kueue reads on a job, and says which of a
// job's own Kueue labels and annotations reach what trainfn renders from it.
//
// Kueue's docs have users label the operator's job object with its queue;
// trainfn renders no such object, only Jobs, StatefulSets and the objects
// beside them, and Kueue reads the same keys there: on a Job or a
// StatefulSet they would make it a Workload of its own, apart from the
// job's pod group. So the job's Kueue keys are not copied onto the objects;
// the few that describe the job's Workload reach its pods, where Kueue
// reads them for a pod group, and the gang pass puts them on the Jobs it
// queues one by one.
package kueue

import (
	"maps"
	"slices"
	"strings"
)

// Prefix marks Kueue's labels and annotations.
const Prefix = "kueue.x-k8s.io/"

// Labels of a job that Kueue reads on what it admits (Kueue v0.19's
// pkg/controller/constants).
const (
	// QueueLabel names the LocalQueue that admits the job.
	QueueLabel = Prefix + "queue-name"
	// PriorityClassLabel names the WorkloadPriorityClass of its Workload.
	PriorityClassLabel = Prefix + "priority-class"
	// MaxExecTimeLabel bounds how long its Workload may stay admitted.
	MaxExecTimeLabel = Prefix + "max-exec-time-seconds"
)

// workloadLabels describe the job's Workload: Kueue reads them on whatever
// it admits, each pod of a pod group or a Job of its own. The queue is not
// among those passed to pods: the gang pass writes it where it belongs.
var workloadLabels = []string{PriorityClassLabel, MaxExecTimeLabel}

// Own tells whether a label or annotation key is Kueue's.
func Own(key string) bool { return strings.HasPrefix(key, Prefix) }

// Without are the keys of m that are not Kueue's: what a job passes on to
// the objects rendered from it.
func Without(m map[string]string) map[string]string {
	out := maps.Clone(m)
	maps.DeleteFunc(out, func(k, _ string) bool { return Own(k) })
	return out
}

// PodLabels are the labels of a job its pods carry: none of the job's own,
// as the operators' pods carry none of an MPIJob's or PyTorchJob's, so that
// an edit to them patches the objects' metadata and restarts no pod; only
// Kueue's that describe the job's Workload, which Kueue reads on the pods
// of a pod group.
func PodLabels(labels map[string]string) map[string]string {
	return WorkloadLabels(labels)
}

// WorkloadLabels are the job's labels that describe its Workload, for what
// Kueue admits.
func WorkloadLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range workloadLabels {
		if v, ok := labels[k]; ok {
			out[k] = v
		}
	}
	return out
}

// DroppedLabels are the job's Kueue labels that reach neither its objects
// nor its pods, sorted: each would change how Kueue admits what carries
// it, which the render decides.
func DroppedLabels(labels map[string]string) []string {
	return own(labels, func(k string) bool { return k != QueueLabel && !slices.Contains(workloadLabels, k) })
}

// DroppedAnnotations are the job's Kueue annotations, sorted: none reaches
// its objects or its pods, for the same reason.
func DroppedAnnotations(annotations map[string]string) []string {
	return own(annotations, func(string) bool { return true })
}

func own(m map[string]string, keep func(string) bool) []string {
	var out []string
	for k := range m {
		if Own(k) && keep(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
