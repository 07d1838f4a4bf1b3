package functions

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
	"github.com/trainfn/trainfn/render/ynode"
	"github.com/trainfn/trainfn/schemas"
)

// readKinds are the kinds trainfn reads: the jobs it renders, Trainer's
// runtimes its TrainJobs resolve against, and its own configuration. The
// table's order is kept: the first of equally near kinds is suggested.
var readKinds = func() []schemas.Kind {
	var kinds []schemas.Kind
	for _, k := range render.Kinds() {
		kinds = append(kinds, k.Kind)
	}
	return append(kinds,
		schemas.Kind{APIVersion: runtimes.APIVersion, Kind: runtimes.TrainingRuntime},
		schemas.Kind{APIVersion: runtimes.APIVersion, Kind: runtimes.ClusterTrainingRuntime},
		schemas.FunctionConfig)
}()

// operatorKinds are the job kinds of the same groups that trainfn does not
// render: they are never near misses, however close their names come to
// one it does (MXJob to MPIJob, TFJob to DIJob), and pass through with a
// warning for their operator.
var operatorKinds = []string{"TFJob", "XGBoostJob", "MXJob", "PaddleJob", "JAXJob"}

// nearMiss reports a document whose apiVersion or kind is within a typo of
// a kind trainfn reads, one problem per field to change; nil for any other.
// A document trainfn does not render passes through, so a typo there
// (kubeflow.com, kubeflow.org/v2, MpiJob) would send the job unexpanded to
// the cluster, where an operator still installed may run it, or nothing
// does, without a word at build time.
func nearMiss(doc Document, kind schemas.Kind) Diagnostics {
	meant, ok := closest(kind)
	if !ok {
		return nil
	}
	var errs field.ErrorList
	if kind.APIVersion != meant.APIVersion {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), kind.APIVersion,
			fmt.Sprintf("trainfn reads %s of %s (did you mean %q?)", meant.Kind, versionsOf(meant.Kind), meant.APIVersion)))
	}
	if kind.Kind != meant.Kind {
		detail := "trainfn reads no such kind"
		if strings.EqualFold(kind.Kind, meant.Kind) {
			detail = "kinds are case-sensitive"
		}
		errs = append(errs, field.Invalid(field.NewPath("kind"), kind.Kind, fmt.Sprintf("%s (did you mean %q?)", detail, meant.Kind)))
	}
	diags := make(Diagnostics, len(errs))
	for i, e := range errs {
		diags[i] = Diagnostic{Severity: Error, Source: doc.Source, Resource: resourceOf(doc.Node.YNode()),
			Field: e.Field, Message: e.ErrorBody()}
		if at := ynode.Get(doc.Node.YNode(), e.Field); at != nil {
			diags[i].Line, diags[i].Column = absolute(doc.Source, at.Line, at.Column)
		}
	}
	return diags
}

// closest is the kind trainfn reads that kind most likely meant: one whose
// name is kind's or within a typo of it, in a group that is kind's or
// within a typo of it, of the version nearest kind's.
func closest(kind schemas.Kind) (schemas.Kind, bool) {
	if slices.Contains(operatorKinds, kind.Kind) {
		return schemas.Kind{}, false
	}
	group, version := splitAPIVersion(kind.APIVersion)
	var best schemas.Kind
	var bestScore []int
	for _, k := range readKinds {
		g, v := resid.ParseGroupVersion(k.APIVersion)
		names, groups := likeness(kind.Kind, k.Kind, kindsAlike), likeness(group, g, groupsAlike)
		if names == 0 || groups == 0 {
			continue
		}
		// Of the versions alike, the nearest; of none, the table's first,
		// the newest.
		versions := likeness(version, v, versionsAlike)
		score := []int{names, groups, versions, 0}
		if versions > 0 {
			score[3] = -schemas.EditDistance(strings.ToLower(version), v)
		}
		if bestScore == nil || slices.Compare(score, bestScore) > 0 {
			best, bestScore = k, score
		}
	}
	// A kind trainfn reads is no miss.
	return best, bestScore != nil && best != kind
}

// splitAPIVersion is an apiVersion's group and version; an apiVersion that
// is a group alone (kubeflow.org) is that group, of no version.
func splitAPIVersion(apiVersion string) (group, version string) {
	group, version = resid.ParseGroupVersion(apiVersion)
	if group == "" && strings.Contains(version, ".") {
		return version, ""
	}
	return group, version
}

// likeness is 2 for the same, 1 for alike, 0 for neither.
func likeness(got, want string, alike func(got, want string) bool) int {
	switch {
	case got == want:
		return 2
	case alike(got, want):
		return 1
	}
	return 0
}

// kindsAlike are names in another case, or one or two edits apart (one for
// a short name, where two would make DIJob of TFJob).
func kindsAlike(got, want string) bool {
	limit := 1
	if len(want) >= 8 {
		limit = 2
	}
	return schemas.EditDistance(strings.ToLower(got), strings.ToLower(want)) <= limit
}

// groupsAlike are groups one of which is likely written for the other: in
// another case or a couple of edits apart (kubeflow.og), under another
// top-level domain (kubeflow.com), of the same domain (training.kubeflow.org,
// written for trainer.kubeflow.org), or none: no job kind is of the core
// group, so an apiVersion of a version alone has left the group out. Other
// projects' groups are not alike, though a kind of theirs is named as one
// trainfn renders (KubeDL's training.kubedl.io PyTorchJob).
func groupsAlike(got, want string) bool {
	got = strings.ToLower(got)
	return got == "" || schemas.EditDistance(got, want) <= 2 ||
		withoutLast(got) == withoutLast(want) || domain(got) == domain(want)
}

var majorVersion = regexp.MustCompile(`^v[0-9]+`)

// versionsAlike are versions in another case or of the same major version
// (v2 for v2beta1, v1 for v1alpha1).
func versionsAlike(got, want string) bool {
	got = strings.ToLower(got)
	return got == want || (majorVersion.MatchString(got) && majorVersion.FindString(got) == majorVersion.FindString(want))
}

// withoutLast is a DNS name less its last label: kubeflow of kubeflow.org.
func withoutLast(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

// domain is a DNS name's last two labels: kubeflow.org of
// trainer.kubeflow.org.
func domain(name string) string {
	labels := strings.Split(name, ".")
	return strings.Join(labels[max(0, len(labels)-2):], ".")
}

// versionsOf lists the apiVersions trainfn reads a kind of, in the table's
// order.
func versionsOf(kind string) string {
	var versions []string
	for _, k := range readKinds {
		if k.Kind == kind {
			versions = append(versions, k.APIVersion)
		}
	}
	if len(versions) == 1 {
		return versions[0]
	}
	return strings.Join(versions[:len(versions)-1], ", ") + " and " + versions[len(versions)-1]
}

// isNearMiss tells whether trainfn refuses a document of this apiVersion
// and kind as a typo.
func isNearMiss(apiVersion, kind string) bool {
	_, ok := closest(schemas.Kind{APIVersion: apiVersion, Kind: kind})
	return ok
}
