package dijob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
)

// check reports what the schema cannot say and rendering relies on.
func (j *Job) check() field.ErrorList {
	var errs field.ErrorList
	if j.Options.ElasticWorkers != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(options.ElasticWorkersAnnotation),
			j.Options.ElasticWorkers.String(), "a DIJob changes its worker count with spec.preemptible, within spec.minReplicas and spec.maxReplicas"))
	}
	seen := map[string]bool{}
	for i, w := range j.Workers {
		if w.Task != "" {
			if seen[w.Task] {
				errs = append(errs, field.Duplicate(field.NewPath("spec", "tasks").Index(i).Child("name"), w.Task))
			}
			seen[w.Task] = true
		}
		t := pod.NewTemplate(w.Template, w.Path)
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
			for _, list := range []string{"command", "args"} {
				if i, v := kubernetesReference(c.Get(list)); i >= 0 {
					errs = append(errs, field.Invalid(c.Path().Child(list).Index(i), c.Get(list).Content[i].Value, referenceMessage(v)))
				}
			}
		}
	}
	if len(errs) == 0 && j.Engine == nil {
		size := 0
		for _, e := range j.fixedEnv(j.Workers[0]) {
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

// maxFixedEnv bounds the host lists written into each template: the API
// server stores objects of at most about 1.5 MiB.
const maxFixedEnv = 512 << 10

// warnings are what a user should know about a job that renders.
func (j *Job) warnings() []render.Warning {
	var warnings []render.Warning
	if j.Options.Gang.Scheduler != options.NoGang {
		warnings = append(warnings, render.Warning{Field: field.NewPath("spec"),
			Message: "gang scheduling is not rendered for DIJobs: their workers start as they are placed"})
	}
	return warnings
}
