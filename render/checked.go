package render

// The checks of what the API server would refuse in a job's objects,
// whatever the kind, and the warnings of what a saved live object brings
// along: passes of every render.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/objectsize"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
)

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
			errs = append(errs, field.Invalid(path.Child("namespace"), ns, msg+"; every object rendered from the job goes into this namespace"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(meta.Labels)) {
		at := path.Child("labels").Key(k)
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(at, k, "a label's name: "+msg+"; every object rendered from the job carries the job's labels"))
		}
		for _, msg := range validation.IsValidLabelValue(meta.Labels[k]) {
			errs = append(errs, field.Invalid(at, meta.Labels[k], msg+"; every object rendered from the job carries the job's labels"))
		}
	}
	inherited := workload.InheritedAnnotations(meta.Annotations)
	size := 0
	for _, k := range slices.Sorted(maps.Keys(inherited)) {
		size += len(k) + len(inherited[k])
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path.Child("annotations").Key(k), k, "an annotation's name: "+msg+"; every object rendered from the job carries the job's annotations"))
		}
	}
	if size > apivalidation.TotalAnnotationSizeLimitB {
		errs = append(errs, field.Invalid(path.Child("annotations"), field.OmitValueType{}, fmt.Sprintf(
			"the job's annotations take %d bytes, more than the %d the API server allows one object's annotations; every object rendered from the job carries them",
			size, apivalidation.TotalAnnotationSizeLimitB)))
	}
	return errs
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
func leftoverWarnings(doc *yaml.RNode) []result.Warning {
	var warnings []result.Warning
	meta := field.NewPath("metadata")
	for _, name := range serverSetMetadata {
		if v, _ := doc.Pipe(yaml.Lookup("metadata", name)); v != nil {
			warnings = append(warnings, result.Warning{Field: meta.Child(name),
				Message: "ignored: the API server sets it on a live object, and `kubectl get -o yaml` leaves it in a saved manifest; delete it"})
		}
	}
	if v, _ := doc.Pipe(yaml.Lookup("metadata", "annotations", lastApplied)); v != nil {
		warnings = append(warnings, result.Warning{Field: meta.Child("annotations").Key(lastApplied),
			Message: "ignored, and not carried onto the rendered objects: kubectl apply keeps it on a live object, and `kubectl get -o yaml` leaves it in a saved manifest; delete it"})
	}
	if v, _ := doc.Pipe(yaml.Lookup("status")); v != nil && len(v.Content()) > 0 {
		warnings = append(warnings, result.Warning{Field: field.NewPath("status"),
			Message: "ignored: the operator's record of a run, which `kubectl get -o yaml` leaves in a saved manifest; delete it"})
	}
	return warnings
}

// sizeErrors refuses objects the API server could not store, naming the
// field of the job spec that holds most of it: a template with a huge
// environment, say, is copied into every workload made from it.
func sizeErrors(doc *yaml.RNode, objects []*yaml.RNode) field.ErrorList {
	var tooLarge []*yaml.RNode
	for _, o := range objects {
		if objectsize.JSON(o.YNode(), objectsize.Max) > objectsize.Max {
			tooLarge = append(tooLarge, o)
		}
	}
	if len(tooLarge) == 0 {
		return nil
	}
	what := tooLarge[0].GetKind() + " " + tooLarge[0].GetName()
	if len(tooLarge) > 1 {
		what += fmt.Sprintf(" (and %d more objects)", len(tooLarge)-1)
	}
	path, bulk := objectsize.Bulk(doc.YNode(), objectsize.Max)
	where := "most of the job spec is here" + objectsize.Entries(bulk)
	if path == nil {
		path, where = field.NewPath("spec"), "no one field of the job spec holds most of it"
	}
	return field.ErrorList{field.Invalid(path, field.OmitValueType{}, fmt.Sprintf(
		"the %s rendered from this job would take more than %d bytes as JSON, the most the API server stores in one object (etcd's default request limit): %s; make it smaller",
		what, objectsize.Max, where))}
}
