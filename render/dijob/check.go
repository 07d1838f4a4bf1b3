package dijob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
)

// Check reports what the schema cannot say and rendering relies on.
func (j *Job) Check() field.ErrorList {
	var errs field.ErrorList
	if len(j.Workers) == 0 {
		return field.ErrorList{field.Required(field.NewPath("spec", "template"),
			"set spec.template (one kind of worker, v1.0's shape) or spec.tasks (a kind of worker per task)")}
	}
	if j.Options.ElasticWorkers != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(options.ElasticWorkersAnnotation),
			j.Options.ElasticWorkers.String(), "a DIJob changes its worker count with spec.preemptible, within spec.minReplicas and spec.maxReplicas"))
	}
	errs = append(errs, j.checkTasks()...)
	for _, w := range j.Workers {
		t := pod.NewTemplate(w.Template, w.Path)
		errs = append(errs, t.ResourceErrors()...)
		if j.Volumes != nil {
			for _, v := range j.Volumes.YNode().Content {
				if err := t.AddVolume(yaml.CopyYNode(v)); err != nil {
					errs = append(errs, field.Invalid(field.NewPath(err.Field), err.BadValue,
						"spec.volumes gives every task's pods a volume of this name: rename one of them"))
				}
			}
		}
		if m := main(t); m.Get("command") == nil {
			errs = append(errs, field.Required(m.Path().Child("command"),
				"the DI-engine container needs a command: trainfn computes "+rankNames()+" from the pod's rank just before running it"))
		}
		for _, c := range t.Containers() {
			errs = append(errs, rankReferences(c)...)
		}
	}
	if e := j.Engine; e != nil && e.Topology == "mesh" {
		if size := meshAttachSize(j.Name, e); size > maxArgument {
			errs = append(errs, field.Invalid(field.NewPath("spec", "maxReplicas"), e.Max,
				fmt.Sprintf("a mesh of %d workers of %d parallel workers gives the last one a DI_ATTACHED_NODES_ARG of %d bytes, more than the %d a command's argument may have: lower maxReplicas or engineFields.parallelWorkers, or use the star topology", e.Max, e.ParallelWorkers, size, maxArgument)))
		}
	}
	if len(errs) == 0 && j.Engine == nil {
		size := 0
		for _, e := range j.fixedEnv() {
			size += len(e[1])
		}
		if size > maxFixedEnv {
			last := j.Workers[len(j.Workers)-1]
			errs = append(errs, field.Invalid(field.NewPath("spec", "tasks"), fmt.Sprintf("%d workers", last.FirstRank+last.Replicas),
				fmt.Sprintf("DI_NODES and DI_<TASK>_NODES would take %d bytes in every pod template, more than the %d that leave room in an object the API server stores: run fewer workers per job", size, maxFixedEnv)))
		}
	}
	return errs
}

// checkTasks applies DI-orchestrator's rules for tasks, in its words:
// at most one task of each typed type (learner, collector, evaluator),
// whose name is its type unless written; a task of type none has a name;
// no two tasks share one.
func (j *Job) checkTasks() field.ErrorList {
	var errs field.ErrorList
	typed := map[string]bool{}
	named := map[string]bool{}
	for i, w := range j.Workers {
		if w.Task == "" {
			continue
		}
		at := field.NewPath("spec", "tasks").Index(i)
		switch {
		case w.Type == noneType && !w.Named:
			errs = append(errs, field.Required(at.Child("name"),
				"none type task has no name: a task of type none needs one, which names its workload, its hosts and DI_<NAME>_NODES"))
			continue
		case w.Type != noneType && typed[w.Type]:
			errs = append(errs, field.Invalid(at.Child("type"), w.Type, fmt.Sprintf(
				"the number of %s task is more than one: DI-orchestrator runs at most one task of each type learner, collector and evaluator, and any number of type none", w.Type)))
			if !w.Named {
				// Its name, the type, is taken for the same reason.
				continue
			}
		}
		typed[w.Type] = true
		if named[w.Task] {
			errs = append(errs, field.Invalid(at.Child("name"), w.Task, "there is more than one task named "+w.Task))
		}
		named[w.Task] = true
	}
	return errs
}

// noneType is the task type of workers DI-engine gives no role.
const noneType = "none"

// maxArgument is the most bytes Linux allows one argument or variable of
// a program it starts (MAX_ARG_STRLEN, 32 pages).
const maxArgument = 128 << 10

// meshAttachSize is the length of the last worker's DI_ATTACHED_NODES_ARG
// in a mesh: every port of every lower rank.
func meshAttachSize(job string, e *Engine) int {
	size := len("DI_ATTACHED_NODES_ARG=--attach-to=")
	for r := range int(e.Max) - 1 {
		host := len("tcp://") + len(job) + len("-worker-") + len(fmt.Sprint(r)) + len(".") + len(job) + len(":22270,")
		size += host * int(e.ParallelWorkers)
	}
	return size
}

// maxFixedEnv bounds the host lists written into each template: the API
// server stores objects of at most about 1.5 MiB.
const maxFixedEnv = 512 << 10
