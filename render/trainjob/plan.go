package trainjob

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
)

// Values of the trainjob-ancestor-step label, which tells Trainer what a
// replicated job of a runtime is for.
const (
	ancestorLabel      = "trainer.kubeflow.org/trainjob-ancestor-step"
	ancestorTrainer    = "trainer"
	datasetInitializer = "dataset-initializer"
	modelInitializer   = "model-initializer"
)

// Names Trainer gives the parts of a runtime.
const (
	nodeName     = "node"
	launcherName = "launcher"
	// trainerPort is the port Trainer opens on the trainer's container
	// for the framework's coordinator.
	trainerPort = 29500
	// jobCompletionIndex is the pod annotation the Job controller sets.
	jobCompletionIndex = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
)

// plan is the runtime as this job runs it: Trainer's runtime.Info, then
// the JobSet it builds. Counts are index-aligned with the replicated jobs.
type plan struct {
	labels, annotations map[string]string
	spec                runtimes.JobSetSpec
	counts              []int32
	mlPolicy            runtimes.MLPolicy
	podGroupPolicy      *runtimes.PodGroupPolicy
	// trainerCommand replaces trainer.command when the policy completes
	// it (torchtune's `tune run`); nil otherwise.
	trainerCommand []string
	// warnings are what the steps changed of the runtime beyond Trainer.
	warnings []result.Warning
	// launch is an MPI runtime's launch mode other than SSH; nil for SSH
	// and other runtimes.
	launch *launch
}

// newPlan applies the job's runtimePatches to a copy of its runtime and
// counts the pods of each replicated job, as Trainer's newRuntimeInfo does.
func (j *Job) newPlan() (*plan, field.ErrorList) {
	rt := j.Runtime
	var spec runtimes.JobSetSpec
	if err := roundTrip(rt.Spec.Template.Spec, &spec); err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
	}
	p := &plan{
		labels:         maps.Clone(rt.Spec.Template.Metadata.Labels),
		annotations:    maps.Clone(rt.Spec.Template.Metadata.Annotations),
		podGroupPolicy: rt.Spec.PodGroupPolicy,
	}
	if rt.Spec.MLPolicy != nil {
		if err := roundTrip(*rt.Spec.MLPolicy, &p.mlPolicy); err != nil {
			return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
		}
	}
	var errs field.ErrorList
	order := make([]string, len(spec.ReplicatedJobs))
	for i, r := range spec.ReplicatedJobs {
		order[i] = r.Name
	}
	patched := j.patchedContainers()
	for i, patch := range j.Spec.RuntimePatches {
		at := field.NewPath("spec", "runtimePatches").Index(i).Child("trainingRuntimeSpec", "template")
		if patch.TrainingRuntimeSpec == nil || patch.TrainingRuntimeSpec.Template == nil {
			continue
		}
		t := patch.TrainingRuntimeSpec.Template
		if t.Metadata != nil {
			p.labels = merged(p.labels, t.Metadata.Labels)
			p.annotations = merged(p.annotations, t.Metadata.Annotations)
		}
		if t.Spec == nil {
			continue
		}
		if names, ok := t.Spec["replicatedJobs"].([]any); ok {
			for k, n := range names {
				name, _ := n.(map[string]any)["name"].(string)
				if !slices.Contains(order, name) {
					errs = append(errs, field.NotFound(at.Child("spec", "replicatedJobs").Index(k).Child("name"), name))
				}
			}
		}
		if len(errs) > 0 {
			continue
		}
		errs = append(errs, unknownContainers(spec, patched, i)...)
		if len(errs) > 0 {
			continue
		}
		var err error
		if spec, err = strategicMerge(spec, t.Spec); err != nil {
			errs = append(errs, field.Invalid(at.Child("spec"), "", err.Error()))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	// A patch keeps the runtime's order of replicated jobs.
	slices.SortStableFunc(spec.ReplicatedJobs, func(a, b runtimes.ReplicatedJob) int {
		return slices.Index(order, a.Name) - slices.Index(order, b.Name)
	})
	p.spec = spec
	p.counts = make([]int32, len(spec.ReplicatedJobs))
	for i, r := range spec.ReplicatedJobs {
		p.counts[i] = 1
		if n := r.Template.Spec.Parallelism; n != nil {
			p.counts[i] = *n
		}
		if ancestor(r) == ancestorTrainer {
			p.counts[i] = 1
			if n := p.mlPolicy.NumNodes; n != nil {
				p.counts[i] = *n
			}
		}
	}
	return p, nil
}

// unknownContainers are the containers and init containers a patch names
// that its replicated job has not, each in its own list: a strategic merge
// patch would add them, without an image, and the pod would never run.
// This is Trainer's rule (jobset.go:193-202), checked before the patch is
// merged: Trainer v2.3.0 checks the merged runtime, where the patch's own
// containers always are.
func unknownContainers(spec runtimes.JobSetSpec, patched []patchedContainer, patch int) field.ErrorList {
	var errs field.ErrorList
	for _, c := range patched {
		if c.patch != patch {
			continue
		}
		k := slices.IndexFunc(spec.ReplicatedJobs, func(r runtimes.ReplicatedJob) bool { return r.Name == c.job })
		if k < 0 {
			continue
		}
		pod := spec.ReplicatedJobs[k].Template.Spec.Template.Spec
		list, kind := pod.Containers, "container"
		if c.list == "initContainers" {
			list, kind = pod.InitContainers, "initContainer"
		}
		if !slices.ContainsFunc(list, func(e corev1.Container) bool { return e.Name == c.name }) {
			errs = append(errs, field.Invalid(c.path.Child("name"), c.name, fmt.Sprintf("must not have %s that doesn't exist in the runtime job %s", kind, c.job)))
		}
	}
	return errs
}

// strategicMerge patches a JobSet spec as Trainer v2.3.0 does: a strategic
// merge patch, with the merge keys of JobSet's and Kubernetes' types
// (replicated jobs, containers, env and volumes by name; volume mounts by
// path; tolerations replaced).
func strategicMerge(spec runtimes.JobSetSpec, patch map[string]any) (runtimes.JobSetSpec, error) {
	source, err := json.Marshal(spec)
	if err != nil {
		return spec, err
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return spec, err
	}
	out, err := strategicpatch.StrategicMergePatch(source, raw, runtimes.JobSetSpec{})
	if err != nil {
		return spec, err
	}
	var patched runtimes.JobSetSpec
	if err := json.Unmarshal(out, &patched); err != nil {
		return spec, fmt.Errorf("the patched runtime is no JobSet spec: %w", err)
	}
	return patched, nil
}

func merged(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

func roundTrip(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func ancestor(r runtimes.ReplicatedJob) string { return r.Template.Labels[ancestorLabel] }

// index finds a replicated job by name; -1 when the runtime has none.
func (p *plan) index(name string) int {
	return slices.IndexFunc(p.spec.ReplicatedJobs, func(r runtimes.ReplicatedJob) bool { return r.Name == name })
}

// byAncestor finds the first replicated job of an ancestor; -1 when none.
func (p *plan) byAncestor(a string) int {
	return slices.IndexFunc(p.spec.ReplicatedJobs, func(r runtimes.ReplicatedJob) bool { return ancestor(r) == a })
}

// container finds a container of a replicated job; nil when it has none.
func (p *plan) container(job int, name string) *corev1.Container {
	if job < 0 {
		return nil
	}
	cs := p.spec.ReplicatedJobs[job].Template.Spec.Template.Spec.Containers
	if i := slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == name }); i >= 0 {
		return &cs[i]
	}
	return nil
}

// podSpec is a replicated job's pod spec.
func (p *plan) podSpec(job int) *corev1.PodSpec {
	return &p.spec.ReplicatedJobs[job].Template.Spec.Template.Spec
}

// upsert sets items of a list by their key, as Trainer's apply.Upsert*
// functions do: an item the list has is replaced in its place, others are
// appended.
func upsert[T any](list *[]T, key func(T) string, items ...T) {
	for _, item := range items {
		if i := slices.IndexFunc(*list, func(e T) bool { return key(e) == key(item) }); i >= 0 {
			(*list)[i] = item
		} else {
			*list = append(*list, item)
		}
	}
}

func upsertEnv(env *[]corev1.EnvVar, vars ...corev1.EnvVar) {
	upsert(env, func(e corev1.EnvVar) string { return e.Name }, vars...)
}

func upsertPort(ports *[]corev1.ContainerPort, port int32) {
	upsert(ports, func(p corev1.ContainerPort) string { return strconv.Itoa(int(p.ContainerPort)) }, corev1.ContainerPort{ContainerPort: port})
}

func upsertVolume(volumes *[]corev1.Volume, v corev1.Volume) {
	upsert(volumes, func(e corev1.Volume) string { return e.Name }, v)
}

// upsertVolumeMount keys mounts by their path, as Trainer does: a mount at
// a path the container has replaces it, whatever volume either names.
func upsertVolumeMount(mounts *[]corev1.VolumeMount, m corev1.VolumeMount) {
	upsert(mounts, func(e corev1.VolumeMount) string { return e.MountPath }, m)
}

func value(name, v string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: v} }

func fromField(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}
