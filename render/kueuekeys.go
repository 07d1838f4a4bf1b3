package render

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/kueue"
	"github.com/trainfn/trainfn/render/result"
)

// kueueKeyWarnings point at the job's Kueue labels and annotations that
// are not passed on: Kueue would read them on the Jobs, StatefulSets or
// pods they reached, and admit those otherwise than the render does.
func kueueKeyWarnings(doc *yaml.RNode) []result.Warning {
	meta, err := doc.GetMeta()
	if err != nil {
		return nil
	}
	const why = "not carried onto the rendered objects or pods: Kueue would read it there and admit them otherwise than trainfn renders the job, " +
		"as one pod group or, for a job resized at run time, Job by Job"
	var warnings []result.Warning
	at := field.NewPath("metadata")
	for _, k := range kueue.DroppedLabels(meta.Labels) {
		warnings = append(warnings, result.Warning{Field: at.Child("labels").Key(k), Message: why})
	}
	for _, k := range kueue.DroppedAnnotations(meta.Annotations) {
		warnings = append(warnings, result.Warning{Field: at.Child("annotations").Key(k), Message: why})
	}
	return warnings
}
