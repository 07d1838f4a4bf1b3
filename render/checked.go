package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Checked finishes a job's render with what the API server would refuse in
// the objects, whatever the kind: the job's namespace, labels and
// annotations, which every object carries (the schemas take them as plain
// strings), and objects too large to store. On an error no object is
// output; the warnings stay. It also warns of what a saved live object
// brings along and the render ignores.
func Checked(doc *yaml.RNode, out Output, errs field.ErrorList) (Output, field.ErrorList) {
	out.Warnings = append(out.Warnings, leftoverWarnings(doc)...)
	if meta := metadataErrors(doc); len(meta) > 0 {
		return Output{Warnings: out.Warnings}, append(meta, errs...)
	}
	if len(errs) > 0 {
		return out, errs
	}
	if size := sizeErrors(doc, out.Objects); len(size) > 0 {
		return Output{Warnings: out.Warnings}, size
	}
	return out, nil
}

// metadataErrors checks the job's metadata as the API server checks every
// object's, in key order so that messages come out the same every run.
func metadataErrors(doc *yaml.RNode) field.ErrorList {
	meta, err := doc.GetMeta()
	if err != nil {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("metadata")
	if ns := meta.Namespace; ns != "" {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(path.Child("namespace"), shown(ns), msg+"; every object rendered from the job goes into this namespace"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(meta.Labels)) {
		at := path.Child("labels").Key(k)
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(at, shown(k), "a label's name: "+msg+"; every object rendered from the job carries the job's labels"))
		}
		for _, msg := range validation.IsValidLabelValue(meta.Labels[k]) {
			errs = append(errs, field.Invalid(at, shown(meta.Labels[k]), msg+"; every object rendered from the job carries the job's labels"))
		}
	}
	inherited := InheritedAnnotations(meta.Annotations)
	size := 0
	for _, k := range slices.Sorted(maps.Keys(inherited)) {
		size += len(k) + len(inherited[k])
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path.Child("annotations").Key(k), shown(k), "an annotation's name: "+msg+"; every object rendered from the job carries the job's annotations"))
		}
	}
	if size > apivalidation.TotalAnnotationSizeLimitB {
		errs = append(errs, field.Invalid(path.Child("annotations"), field.OmitValueType{}, fmt.Sprintf(
			"the job's annotations take %d bytes, more than the %d the API server allows one object's annotations; every object rendered from the job carries them",
			size, apivalidation.TotalAnnotationSizeLimitB)))
	}
	return errs
}

// shown is a value as a message quotes it: a long one is cut short, since
// the message is about its form, and a megabyte of it would bury the rest.
func shown(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	cut := 0
	for i := range s {
		if i > most {
			break
		}
		cut = i
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}

// serverSetMetadata are the fields of metadata the API server sets on a
// live object, in the order kubectl prints them. A manifest saved with
// `kubectl get -o yaml` carries them; in Git they mean nothing, and the
// render reads none of them. metadata.generation is left out: a DIJob
// reads it (DI_JOB_GENERATION).
var serverSetMetadata = []string{"creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp", "managedFields", "resourceVersion", "selfLink", "uid"}

// lastApplied is the annotation kubectl apply keeps the applied manifest in.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// leftoverWarnings point at what `kubectl get -o yaml` leaves in a saved
// manifest: fields the API server or the operator set, which the render
// ignores, so that the manifest in Git says only what the user means.
func leftoverWarnings(doc *yaml.RNode) []Warning {
	var warnings []Warning
	meta := field.NewPath("metadata")
	for _, name := range serverSetMetadata {
		if v, _ := doc.Pipe(yaml.Lookup("metadata", name)); v != nil {
			warnings = append(warnings, Warning{Field: meta.Child(name),
				Message: "ignored: the API server sets it on a live object, and `kubectl get -o yaml` leaves it in a saved manifest; delete it"})
		}
	}
	if v, _ := doc.Pipe(yaml.Lookup("metadata", "annotations", lastApplied)); v != nil {
		warnings = append(warnings, Warning{Field: meta.Child("annotations").Key(lastApplied),
			Message: "ignored, and not carried onto the rendered objects: kubectl apply keeps it on a live object, and `kubectl get -o yaml` leaves it in a saved manifest; delete it"})
	}
	if v, _ := doc.Pipe(yaml.Lookup("status")); v != nil && len(v.Content()) > 0 {
		warnings = append(warnings, Warning{Field: field.NewPath("status"),
			Message: "ignored: the operator's record of a run, which `kubectl get -o yaml` leaves in a saved manifest; delete it"})
	}
	return warnings
}
