// Package downward checks what a job's containers read of their own pod
// through the downward API (fieldRef: metadata.labels['...'] in env)
// against what the pods will carry. The operators set
// labels of their own on every pod (training.kubeflow.org/replica-index,
// replica-type); trainfn's workloads set some of them, and their
// controllers others. A label no one sets reads as an empty string, which
// scripts take for index 0 or a role they do not have: the render provides
// the value where a label the workload's controller sets carries it, and
// otherwise says which label to read instead.
package downward

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/ynode"
)

// Labels and annotations the workloads' controllers put on their pods.
const (
	// CompletionIndex is an Indexed Job's pod index, as a label and an
	// annotation; its pods also have it as JOB_COMPLETION_INDEX.
	CompletionIndex = "batch.kubernetes.io/job-completion-index"
	// PodIndex is a StatefulSet pod's ordinal.
	PodIndex = "apps.kubernetes.io/pod-index"
)

// What the Job and StatefulSet controllers label their pods with, beside
// the template's own.
var (
	jobLabels         = []string{"batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name", "controller-uid", "job-name"}
	statefulSetLabels = []string{"controller-revision-hash", "statefulset.kubernetes.io/pod-name", PodIndex}
)

// watched are the keys a read of which is checked: the operators' own, and
// the controllers' index labels, which another workload lacks.
func watched(key string) bool {
	return strings.HasPrefix(key, "training.kubeflow.org/") || strings.HasPrefix(key, "kubeflow.org/") ||
		key == CompletionIndex || key == PodIndex || key == "statefulset.kubernetes.io/pod-name"
}

// fieldRef is a downward API path to a label or an annotation.
var fieldRef = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`)

// Check reads every member's containers. Where a read label is replica
// index and the workload's own index carries the same value (workers
// numbered from 0 in an Indexed Job or a StatefulSet), it reads that
// instead, and says so; any other read of a label the pods will not carry
// is a warning naming what to read. Jobs whose launcher is their first
// host number their workers from 1: their index is not provided.
func Check(members []gang.Member) []result.Warning {
	var warnings []result.Warning
	seen := map[string]bool{}
	shifted := launcherIsHostZero(members)
	for _, m := range members {
		labels, annotations := carried(m)
		for _, c := range containers(m) {
			for _, r := range reads(c) {
				have := labels
				if r.in == "annotations" {
					have = annotations
				}
				if !watched(r.key) || slices.Contains(have, r.key) {
					continue
				}
				message := unset(r, m, labels, shifted)
				if message == "" {
					continue
				}
				if id := r.at.String() + message; !seen[id] {
					seen[id] = true
					warnings = append(warnings, result.Warning{Field: r.at, Message: message})
				}
			}
		}
	}
	return warnings
}

// read is one downward API read of a label or an annotation.
type read struct {
	in, key string
	// path is the fieldPath's node, which providing a value rewrites.
	path *yaml.Node
	at   *field.Path
	// container tells a container's read, which is warned of, from an init
	// container's, which follows it.
	container bool
}

// unset is the warning for a read of a key the pods will not carry, after
// providing its value where a key they carry holds it; empty when nothing
// needs saying.
func unset(r read, m gang.Member, labels []string, shifted bool) string {
	what := fmt.Sprintf("reads the pod's %s %s, which no pod of this %s carries",
		singular(r.in), r.key, workloadOf(m))
	if r.key == handoff.ReplicaIndexLabel && !shifted {
		if index := indexKey(m, r.in); index != "" {
			r.path.Value = "metadata." + r.in + "['" + index + "']"
			r.path.Style = 0
			if !r.container {
				return ""
			}
			return what + fmt.Sprintf(": reads %s instead, which the %s sets to the same value (its pods share one template, which cannot carry each one's index)", index, workloadOf(m))
		}
	}
	var instead string
	switch {
	case r.key == handoff.ReplicaIndexLabel && indexKey(m, r.in) != "":
		instead = indexKey(m, r.in) + ", or " + indexEnv(m)
	case r.key == handoff.ReplicaTypeLabel && slices.Contains(labels, handoff.JobRoleLabel):
		instead = handoff.JobRoleLabel
	case r.key == CompletionIndex && slices.Contains(labels, PodIndex):
		instead = PodIndex
	case r.key == PodIndex && slices.Contains(labels, CompletionIndex):
		instead = CompletionIndex + ", or JOB_COMPLETION_INDEX"
	}
	if !r.container {
		return ""
	}
	if instead == "" {
		return what + "; set it in the template's metadata." + r.in + " if the job needs it"
	}
	if shifted && r.key == handoff.ReplicaIndexLabel {
		return what + ": read " + instead + ", which counts the workers from 0 where the launcher, host 0 of the hostfile, makes them 1 and up"
	}
	return what + ": read " + instead + " instead"
}

func singular(in string) string { return strings.TrimSuffix(in, "s") }

// indexKey is the key that carries a pod's index among its workload's
// pods, in labels or annotations; empty for a workload of one pod per
// template.
func indexKey(m gang.Member, in string) string {
	switch workloadOf(m) {
	case "Indexed Job":
		return CompletionIndex
	case "StatefulSet":
		if in == "labels" {
			return PodIndex
		}
	}
	return ""
}

// indexEnv is the variable that carries the index, where there is one.
func indexEnv(m gang.Member) string {
	if workloadOf(m) == "Indexed Job" {
		return "JOB_COMPLETION_INDEX"
	}
	return "the ordinal at the end of the pod's hostname"
}

// workloadOf names a member's workload: Job, Indexed Job or StatefulSet.
func workloadOf(m gang.Member) string {
	if m.Workload.GetKind() == "Job" {
		if mode, _ := m.Workload.Pipe(yaml.Lookup("spec", "completionMode")); mode != nil && yaml.GetValue(mode) == "Indexed" {
			return "Indexed Job"
		}
	}
	return m.Workload.GetKind()
}

// carried are the labels and annotations every pod of a member carries:
// its template's and its controller's.
func carried(m gang.Member) (labels, annotations []string) {
	meta := ynode.Get(m.Template.Node(), "metadata")
	for _, key := range []string{"labels", "annotations"} {
		if n := ynode.Get(meta, key); n != nil {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if key == "labels" {
					labels = append(labels, n.Content[i].Value)
				} else {
					annotations = append(annotations, n.Content[i].Value)
				}
			}
		}
	}
	switch workloadOf(m) {
	case "Indexed Job":
		labels = append(slices.Concat(labels, jobLabels), CompletionIndex)
		annotations = append(annotations, CompletionIndex)
	case "Job":
		labels = slices.Concat(labels, jobLabels)
	case "StatefulSet":
		labels = slices.Concat(labels, statefulSetLabels)
	}
	return labels, annotations
}

// container is a container's node, its path, and whether it is one of the
// template's containers rather than an init container.
type container struct {
	node *yaml.Node
	at   *field.Path
	main bool
}

func containers(m gang.Member) []container {
	var out []container
	spec := ynode.Get(m.Template.Node(), "spec")
	for _, list := range []string{"containers", "initContainers"} {
		if n := ynode.Get(spec, list); n != nil {
			for i, c := range n.Content {
				out = append(out, container{c, m.Template.Path(list).Index(i), list == "containers"})
			}
		}
	}
	return out
}

// reads are a container's downward API reads of labels and annotations
// through its env, where scripts take their index and role from.
func reads(c container) []read {
	var out []read
	if env := ynode.Get(c.node, "env"); env != nil {
		for i, e := range env.Content {
			path := ynode.Get(ynode.Get(ynode.Get(e, "valueFrom"), "fieldRef"), "fieldPath")
			if path == nil {
				continue
			}
			if m := fieldRef.FindStringSubmatch(path.Value); m != nil {
				at := c.at.Child("env").Index(i).Child("valueFrom", "fieldRef", "fieldPath")
				out = append(out, read{in: m[1], key: m[2], path: path, at: at, container: c.main})
			}
		}
	}
	return out
}

// launcherIsHostZero tells whether a launcher's pod carries replica index
// 0 (an MPIJob whose launcher also works): its workers are then numbered
// from 1, one more than their workload's index.
func launcherIsHostZero(members []gang.Member) bool {
	for _, m := range members {
		meta := ynode.Get(ynode.Get(m.Template.Node(), "metadata"), "labels")
		if ynode.ScalarValue(ynode.Get(meta, handoff.JobRoleLabel)) == handoff.RoleLauncher &&
			ynode.ScalarValue(ynode.Get(meta, handoff.ReplicaIndexLabel)) == "0" {
			return true
		}
	}
	return false
}
