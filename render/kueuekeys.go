package render

import (
	"strings"

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

// admittedByKueue renders a job that Kueue's docs suspend, as they have
// users do optionally (runPolicy.suspend, a TrainJob's spec.suspend), with
// its pod group's Jobs running: Kueue resumes the operator's job it
// admits, but it does not manage the Jobs of a pod group, whose pods it
// holds at their gate instead, and nothing would resume them. Jobs Kueue
// admits one by one, which carry the queue, stay suspended until it does.
func admittedByKueue(doc *yaml.RNode, objects []*yaml.RNode) []result.Warning {
	var at string
	for _, path := range []string{"spec.runPolicy.suspend", "spec.suspend"} {
		if v, err := doc.Pipe(yaml.Lookup(strings.Split(path, ".")...)); err == nil && v != nil && yaml.GetValue(v) == "true" {
			at = path
		}
	}
	if at == "" {
		return nil
	}
	resumed := false
	for _, o := range objects {
		if o.GetKind() != "Job" || o.GetLabels()[kueue.QueueLabel] != "" {
			continue
		}
		if spec := o.Field("spec"); spec != nil && spec.Value.Field("suspend") != nil {
			_, _ = spec.Value.Pipe(yaml.Clear("suspend"))
			resumed = true
		}
	}
	if !resumed {
		return nil
	}
	return []result.Warning{{Field: fieldPath(at), Message: "not rendered onto the Jobs: Kueue resumes a job it admits, but it does not manage a pod group's Jobs, " +
		"whose pods wait at its gate until the job is admitted, and nothing would resume them"}}
}

// fieldPath is a dotted path of plain fields.
func fieldPath(dotted string) *field.Path {
	parts := strings.Split(dotted, ".")
	return field.NewPath(parts[0], parts[1:]...)
}
