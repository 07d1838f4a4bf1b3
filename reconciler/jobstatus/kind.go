package jobstatus

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/trainfn/trainfn/reconciler/phase"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/labels"
)

// The job kinds trainfn renders, as KindOf names them.
const (
	DIJob      = "DIJob"
	MPIJob     = "MPIJob"
	PyTorchJob = "PyTorchJob"
	// UnknownKind is a job whose objects match none of the marks below:
	// rendered by a later trainfn, say, or labelled by hand.
	UnknownKind = "Unknown"
)

// KindOf infers the kind of job spec a job was rendered from; the rendered
// objects do not name it, but each kind leaves its own mark, tested in
// this order:
//   - DIJob: a workload carries trainfn.dev/dijob-generation (a DIJob's
//     task may be named anything, launcher or master included, so this
//     mark comes first);
//   - MPIJob: a workload or pod has the launcher role, or a workload
//     carries trainfn.dev/slots-per-worker;
//   - PyTorchJob: a workload or pod has the master role, or a workload's
//     pod template sets one of torchrun's PET_ variables, as every
//     PyTorchJob's does (workers-only and elastic ones have no master).
func KindOf(objs phase.Objects) string {
	var annotations []map[string]string
	var templates []*corev1.PodTemplateSpec
	var roles []string
	for i := range objs.Jobs {
		j := &objs.Jobs[i]
		annotations, templates, roles = append(annotations, j.Annotations), append(templates, &j.Spec.Template), append(roles, j.Labels[labels.JobRole])
	}
	for i := range objs.StatefulSets {
		s := &objs.StatefulSets[i]
		annotations, templates, roles = append(annotations, s.Annotations), append(templates, &s.Spec.Template), append(roles, s.Labels[labels.JobRole])
	}
	for _, p := range objs.Pods {
		roles = append(roles, labels.PodRole(p.Labels))
	}
	has := func(key string) bool {
		for _, a := range annotations {
			if _, ok := a[key]; ok {
				return true
			}
		}
		return false
	}
	hasRole := func(role string) bool {
		for _, r := range roles {
			if r == role {
				return true
			}
		}
		return false
	}
	switch {
	case has(handoff.DIJobGeneration):
		return DIJob
	case hasRole(labels.RoleLauncher) || has(handoff.SlotsPerWorker):
		return MPIJob
	case hasRole(labels.RoleMaster) || setsTorchrunVariables(templates):
		return PyTorchJob
	}
	return UnknownKind
}

// setsTorchrunVariables tells whether a container of the templates has a
// PET_ variable: torchrun reads its options from them.
func setsTorchrunVariables(templates []*corev1.PodTemplateSpec) bool {
	for _, t := range templates {
		for _, c := range t.Spec.Containers {
			for _, e := range c.Env {
				if strings.HasPrefix(e.Name, "PET_") {
					return true
				}
			}
		}
	}
	return false
}
