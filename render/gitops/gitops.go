// Package gitops prepares a job's rendered objects for the GitOps tools that
// apply them, so that a job changed in Git runs anew on the next sync without
// anyone deleting objects by hand.
//
// Two facts make that hard. A Job's pod template is immutable, so applying a
// changed Job fails; and a job is several objects that only make sense
// together: a new worker count changes the workers' Job and the hostfile,
// but not the launcher's template, whose running mpirun would never see it.
//
// Stamp answers both. Every pod template a job renders carries the digest of
// what the job's pods run (handoff.DigestLabel): their templates, the files
// they read as they start. A change to what any of its pods run changes
// every one of its templates, and every Job asks the tools to delete and
// create it again when the API server refuses to patch it: Flux's
// kustomize-controller through its force annotation; Argo CD through its
// Force sync option (kubectl apply --force). kubectl refuses --force with
// server-side apply, so the Jobs also ask Argo CD for a client-side apply,
// whatever the Application uses for everything else. The job's Services
// select the digest too, so the pods of the revision being replaced leave
// the job's DNS names at once, before they are gone, and a new launcher
// never reaches an old worker. A job whose pods run what they ran renders
// the same digest, so a sync patches what changed (labels, annotations, a
// Job's TTL or suspend) and leaves the pods running.
package gitops

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/ynode"
)

const (
	// FluxForceAnnotation asks Flux's kustomize-controller to recreate the
	// object when applying it fails on an immutable field.
	FluxForceAnnotation = "kustomize.toolkit.fluxcd.io/force"
	fluxForceEnabled    = "enabled"

	// ArgoSyncOptionsAnnotation holds Argo CD's per-object sync options,
	// comma-separated.
	ArgoSyncOptionsAnnotation = "argocd.argoproj.io/sync-options"
	argoForce                 = "Force=true"
	// argoClientSide keeps Argo CD's Force from meeting server-side apply,
	// which kubectl refuses: every sync of the Job would fail.
	argoClientSide = "ServerSideApply=false"
)

// Stamp labels the pod templates of objects, and their Services' selectors,
// with the digest of objects, and asks for the recreation of their Jobs. A
// choice the job's own annotations already made for either tool is kept:
// Argo CD options that set ServerSideApply, Replace or Force are left alone,
// except that Force=true gets the client-side apply it needs.
func Stamp(objects []*yaml.RNode) error {
	digest, err := Digest(objects)
	if err != nil {
		return err
	}
	for _, obj := range objects {
		if err := stamp(obj, digest); err != nil {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// Where stamp writes: the labels of a workload's pod template, the
// selector of a Service, an object's annotations.
var (
	templateLabels = yaml.LookupCreate(yaml.MappingNode, "spec", "template", "metadata", "labels")
	selector       = yaml.LookupCreate(yaml.MappingNode, "spec", "selector")
	annotations    = yaml.LookupCreate(yaml.MappingNode, "metadata", "annotations")
)

func stamp(obj *yaml.RNode, digest string) error {
	label := ynode.SetString(handoff.DigestLabel, digest)
	switch obj.GetApiVersion() + " " + obj.GetKind() {
	case "batch/v1 Job":
		if err := obj.PipeE(templateLabels, label); err != nil {
			return err
		}
		if err := revisePodGroup(obj, digest); err != nil {
			return err
		}
		return askToRecreate(obj)
	case "apps/v1 StatefulSet":
		if err := obj.PipeE(templateLabels, label); err != nil {
			return err
		}
		return revisePodGroup(obj, digest)
	case "v1 Service":
		if spec := obj.Field("spec"); spec != nil && spec.Value.Field("selector") != nil {
			return obj.PipeE(selector, label)
		}
	}
	return nil
}

// revisePodGroup names the Kueue pod group of a workload's pods, if they
// are in one, after the job's revision: <group>-<digest>. Kueue keeps a
// finished group's Workload, which bears the group's name, and holds new
// pods of that group gated for good; the Jobs of a job changed in Git are
// made again, and their pods must form a group of a new name.
func revisePodGroup(obj *yaml.RNode, digest string) error {
	n, err := obj.Pipe(yaml.Lookup("spec", "template", "metadata", "labels", gang.KueuePodGroupLabel))
	if err != nil || n == nil {
		return err
	}
	return obj.PipeE(templateLabels, ynode.SetString(gang.KueuePodGroupLabel, revisionName(yaml.GetValue(n), digest)))
}

// revisionName is name-digest, the name shortened so that the whole fits
// in a label value.
func revisionName(name, digest string) string {
	if keep := validation.LabelValueMaxLength - len(digest) - 1; len(name) > keep {
		name = name[:keep]
	}
	return name + "-" + digest
}

// Digest is a short SHA-256 of what the pods of objects run (WhatPodsRun),
// in the objects' order: rendering is deterministic, so the same job always
// gives the same digest. Content is hashed as JSON, so comments, quoting
// and key order, which a YAML library may change between versions, never
// restart a job; nor does anything a pod does not run: metadata, Services,
// RBAC, and the Job fields the API server lets a running Job change.
func Digest(objects []*yaml.RNode) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, obj := range objects {
		content, err := obj.Map()
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		run := WhatPodsRun(content)
		if run == nil {
			continue
		}
		if err := enc.Encode(run); err != nil {
			return "", fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	// 64 bits tell a job's revisions apart; the full 256 would only make
	// every pod's metadata longer.
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// addTrainfnsAnnotations adds to a workload's run the annotations of its
// metadata that trainfn renders for the reconciler (handoff's), if any: the
// job's own trainfn.dev/ annotations configure the render and are not
// carried onto its objects. None adds nothing, so that a workload without
// them hashes as it did before they counted.
func addTrainfnsAnnotations(run, metadata map[string]any) {
	annotations, _ := metadata["annotations"].(map[string]any)
	ours := maps.Clone(annotations)
	maps.DeleteFunc(ours, func(k string, _ any) bool { return !strings.HasPrefix(k, options.AnnotationPrefix) })
	if len(ours) > 0 {
		run["annotations"] = ours
	}
}

// inPlaceJobFields are the fields of a Job's spec that the API server lets
// a sync patch on a running Job (batch/v1 JobSpec): a change to one of them
// alone updates the Job, and restarts nothing. parallelism and completions
// are not among them: a job's worker count changes its hostfile too.
var inPlaceJobFields = []string{"activeDeadlineSeconds", "backoffLimit", "maxFailedIndexes", "suspend", "ttlSecondsAfterFinished"}

// WhatPodsRun is the part of a rendered object that a change to must run
// the job anew, or nil: a workload's spec, its pod template above all,
// but for the fields patched in place, and the annotations of trainfn's
// the reconciler reads on it (an elastic job's worker count and bounds,
// which say how many pods run); and a ConfigMap's data, which pods read as
// they start (the hostfile, trainfn's scripts). Each is named by its kind
// and name, so that a renamed object counts as a change.
func WhatPodsRun(content map[string]any) map[string]any {
	metadata, _ := content["metadata"].(map[string]any)
	run := map[string]any{"apiVersion": content["apiVersion"], "kind": content["kind"], "name": metadata["name"]}
	switch fmt.Sprint(content["apiVersion"], " ", content["kind"]) {
	case "batch/v1 Job":
		spec, _ := content["spec"].(map[string]any)
		spec = maps.Clone(spec)
		for _, f := range inPlaceJobFields {
			delete(spec, f)
		}
		run["spec"] = spec
		addTrainfnsAnnotations(run, metadata)
	case "apps/v1 StatefulSet":
		run["spec"] = content["spec"]
		addTrainfnsAnnotations(run, metadata)
	case "v1 ConfigMap":
		run["data"], run["binaryData"] = content["data"], content["binaryData"]
	default:
		return nil
	}
	return run
}

func askToRecreate(job *yaml.RNode) error {
	given := job.GetAnnotations()
	if _, chosen := given[FluxForceAnnotation]; !chosen {
		if err := job.PipeE(annotations, ynode.SetString(FluxForceAnnotation, fluxForceEnabled)); err != nil {
			return err
		}
	}
	options := given[ArgoSyncOptionsAnnotation]
	var add []string
	switch {
	case hasOption(options, "ServerSideApply"):
	case hasOption(options, "Replace"), hasOption(options, "Force"):
		if optionSet(options, argoForce) {
			add = []string{argoClientSide}
		}
	default:
		add = []string{argoClientSide, argoForce}
	}
	if len(add) == 0 {
		return nil
	}
	if strings.TrimSpace(options) != "" {
		add = append([]string{options}, add...)
	}
	return job.PipeE(annotations, ynode.SetString(ArgoSyncOptionsAnnotation, strings.Join(add, ",")))
}

// hasOption reports whether Argo CD's comma-separated sync options set name,
// to any value.
func hasOption(options, name string) bool {
	for _, o := range strings.Split(options, ",") {
		if k, _, _ := strings.Cut(strings.TrimSpace(o), "="); k == name {
			return true
		}
	}
	return false
}

// optionSet reports whether the sync options hold option exactly, as Argo
// CD reads them.
func optionSet(options, option string) bool {
	for _, o := range strings.Split(options, ",") {
		if strings.TrimSpace(o) == option {
			return true
		}
	}
	return false
}
