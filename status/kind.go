package status

import (
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status/phase"
)

// UnknownKind is the kind of a job whose workloads carry no kind label:
// rendered by a trainfn older than the label, or labelled by hand.
const UnknownKind = "Unknown"

// KindOf is the kind of job spec a job was rendered from, as the render
// labelled its workloads (handoff.KindLabel); UnknownKind when none says.
func KindOf(objs phase.Objects) string {
	for _, j := range objs.Jobs {
		if kind := j.Labels[handoff.KindLabel]; kind != "" {
			return kind
		}
	}
	for _, s := range objs.StatefulSets {
		if kind := s.Labels[handoff.KindLabel]; kind != "" {
			return kind
		}
	}
	return UnknownKind
}
