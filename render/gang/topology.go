package gang

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kueue's topology-aware scheduling reads these annotations of a pod
// template, a PodSet's request ("Topology Aware Scheduling" in Kueue's
// documentation).
const (
	tasRequired         = "kueue.x-k8s.io/podset-required-topology"
	tasPreferred        = "kueue.x-k8s.io/podset-preferred-topology"
	tasUnconstrained    = "kueue.x-k8s.io/podset-unconstrained-topology"
	tasSliceRequired    = "kueue.x-k8s.io/podset-slice-required-topology"
	tasSliceSize        = "kueue.x-k8s.io/podset-slice-size"
	tasSliceConstraints = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
	tasGroupName        = "kueue.x-k8s.io/podset-group-name"
	maxSliceLayers      = 3
)

// checkTopology refuses, at render time, the topology requests that
// Kueue's webhooks refuse when the Jobs or their pods are created, with
// Kueue's words (v0.19's ValidateTASPodSetRequest and the upper bound of a
// slice): Kueue checks every Job and pod of the namespaces it manages,
// whatever the gang scheduler, so a request it refuses would stop the job
// at kubectl apply, or leave its Jobs making no pods.
func checkTopology(members []Member) field.ErrorList {
	var errs field.ErrorList
	for _, m := range members {
		a := m.Template.Annotations()
		at := m.Template.AnnotationPath
		_, required := a[tasRequired]
		_, preferred := a[tasPreferred]
		_, unconstrained := a[tasUnconstrained]
		_, sliceRequired := a[tasSliceRequired]
		sizeValue, sliceSize := a[tasSliceSize]
		constraintsValue, constraints := a[tasSliceConstraints]
		groupValue, group := a[tasGroupName]

		n := 0
		for _, set := range []bool{required, preferred, unconstrained} {
			if set {
				n++
			}
		}
		if n > 1 {
			errs = append(errs, field.Invalid(at(tasRequired), fmt.Sprintf("%d topology annotations", n),
				fmt.Sprintf("must not contain more than one topology annotation: [%q, %q, %q]", tasRequired, tasPreferred, tasUnconstrained)))
		}
		for _, key := range []string{tasRequired, tasPreferred, tasSliceRequired} {
			if v, ok := a[key]; ok {
				for _, msg := range validation.IsQualifiedName(v) {
					errs = append(errs, field.Invalid(at(key), v, msg))
				}
			}
		}
		if unconstrained {
			if _, err := strconv.ParseBool(a[tasUnconstrained]); err != nil {
				errs = append(errs, field.Invalid(at(tasUnconstrained), a[tasUnconstrained], "must be a boolean value"))
			}
		}
		if group {
			switch {
			case isNumber(groupValue):
				errs = append(errs, field.Invalid(at(tasGroupName), groupValue, "must not be a number"))
			case sliceSize:
				errs = append(errs, field.Invalid(at(tasGroupName), groupValue, fmt.Sprintf("may not be set when '%s' is specified", tasSliceSize)))
			case sliceRequired:
				errs = append(errs, field.Invalid(at(tasGroupName), groupValue, fmt.Sprintf("may not be set when '%s' is specified", tasSliceRequired)))
			case constraints:
				errs = append(errs, field.Invalid(at(tasGroupName), groupValue, fmt.Sprintf("may not be set when '%s' is specified", tasSliceConstraints)))
			case !required && !preferred:
				errs = append(errs, field.Invalid(at(tasGroupName), groupValue,
					fmt.Sprintf("may not be set when neither '%s' nor '%s' is specified", tasPreferred, tasRequired)))
			}
		}
		if sliceSize {
			switch size, err := strconv.ParseInt(sizeValue, 10, 32); {
			case err != nil:
				errs = append(errs, field.Invalid(at(tasSliceSize), sizeValue, "must be a numeric value"))
			case size < 1:
				errs = append(errs, field.Invalid(at(tasSliceSize), sizeValue, "must be greater than or equal to 1"))
			case !m.Resized && size > int64(m.Pods):
				errs = append(errs, field.Invalid(at(tasSliceSize), sizeValue, fmt.Sprintf("must not be greater than pod set count %d", m.Pods)))
			}
		}
		switch {
		case sliceRequired && !sliceSize:
			errs = append(errs, field.Required(at(tasSliceSize), fmt.Sprintf("must be set when '%s' is specified", tasSliceRequired)))
		case sliceSize && !sliceRequired:
			errs = append(errs, field.Invalid(at(tasSliceSize), sizeValue, fmt.Sprintf("may not be set when '%s' is not specified", tasSliceRequired)))
		}
		if constraints {
			errs = append(errs, checkSliceConstraints(m, constraintsValue, sliceRequired, sliceSize)...)
		}
	}
	return errs
}

// checkSliceConstraints checks the layers of slices a pod template asks
// for, as Kueue does.
func checkSliceConstraints(m Member, value string, sliceRequired, sliceSize bool) field.ErrorList {
	path := m.Template.AnnotationPath(tasSliceConstraints)
	var errs field.ErrorList
	for _, key := range []string{tasSliceRequired, tasSliceSize} {
		if (key == tasSliceRequired && sliceRequired) || (key == tasSliceSize && sliceSize) {
			errs = append(errs, field.Invalid(path, value, fmt.Sprintf("may not be set when '%s' is specified", key)))
		}
	}
	var layers []struct {
		Topology string `json:"topology"`
		Size     int32  `json:"size"`
	}
	if err := json.Unmarshal([]byte(value), &layers); err != nil {
		return append(errs, field.Invalid(path, value, "must be a valid JSON array: "+err.Error()))
	}
	if len(layers) < 1 || len(layers) > maxSliceLayers {
		return append(errs, field.Invalid(path, value, fmt.Sprintf("topology constraints must contain between 1 and %d entries", maxSliceLayers)))
	}
	seen := map[string]int{}
	for i, l := range layers {
		at := path.Index(i)
		for _, msg := range validation.IsQualifiedName(l.Topology) {
			errs = append(errs, field.Invalid(at.Child("topology"), l.Topology, msg))
		}
		if j, ok := seen[l.Topology]; ok {
			errs = append(errs, field.Duplicate(at.Child("topology"), fmt.Sprintf("%s (also at index %d)", l.Topology, j)))
		}
		seen[l.Topology] = i
		if l.Size < 1 {
			errs = append(errs, field.Invalid(at.Child("size"), l.Size, "must be greater than or equal to 1"))
			continue
		}
		if i > 0 && layers[i-1].Size >= 1 && layers[i-1].Size%l.Size != 0 {
			errs = append(errs, field.Invalid(at.Child("size"), l.Size, fmt.Sprintf("must evenly divide the parent layer size %d", layers[i-1].Size)))
		}
	}
	if !m.Resized && layers[0].Size > m.Pods {
		errs = append(errs, field.Invalid(path.Index(0).Child("size"), layers[0].Size, fmt.Sprintf("must not be greater than pod set count %d", m.Pods)))
	}
	return errs
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
