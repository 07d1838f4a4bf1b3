package dijob

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/schemas"
)

// v2alpha1Spec is the part of a DIJob spec, defaults filled in by the
// schema, that rendering reads; pod templates are read from the document as
// written.
type v2alpha1Spec struct {
	Priority       string `json:"priority"`
	CleanPodPolicy string `json:"cleanPodPolicy"`
	Preemptible    bool   `json:"preemptible"`
	BackoffLimit   int32  `json:"backoffLimit"`
	EngineFields   *struct {
		Topology        string `json:"topology"`
		ParallelWorkers int32  `json:"parallelWorkers"`
	} `json:"engineFields"`
	MinReplicas *int32 `json:"minReplicas"`
	MaxReplicas *int32 `json:"maxReplicas"`
	Tasks       []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Replicas int32  `json:"replicas"`
	} `json:"tasks"`
}

// DecodeV2alpha1 reads a validated diengine.opendilab.org/v2alpha1 DIJob.
func DecodeV2alpha1(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	job, err := fromV2alpha1(v)
	if err != nil {
		return nil, nil, err
	}
	job.Options = opts
	return job, nil, nil
}

func fromV2alpha1(v *schemas.Validated) (*Job, error) {
	var spec v2alpha1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	owner, err := workload.OwnerOf(v.Doc)
	if err != nil {
		return nil, err
	}
	job := &Job{
		Owner:          owner,
		Generation:     generation(v.Doc),
		Priority:       spec.Priority,
		CleanPodPolicy: spec.CleanPodPolicy,
		BackoffLimit:   spec.BackoffLimit,
		Preemptible:    spec.Preemptible,
	}
	path := field.NewPath("spec")
	// The shape is the template's or the tasks': the schema lets engine
	// fields and replica bounds stand without a template, for check to
	// refuse the job as having neither.
	template, err := v.Doc.Pipe(yaml.Lookup("spec", "template"))
	if err != nil {
		return nil, fmt.Errorf("reading spec.template: %w", err)
	}
	if template == nil && len(spec.Tasks) == 0 {
		// Neither shape: check reports it.
		return job, nil
	}
	if template != nil {
		// The schema gives a job with a template its engine fields and
		// minReplicas; a missing maxReplicas is minReplicas, as upstream.
		e := &Engine{Topology: spec.EngineFields.Topology, ParallelWorkers: spec.EngineFields.ParallelWorkers, Min: *spec.MinReplicas, Max: *spec.MinReplicas}
		if spec.MaxReplicas != nil {
			e.Max = *spec.MaxReplicas
		}
		job.Engine = e
		job.Workers = []*Workers{{
			Workload: handoff.WorkersName(owner.Name), Role: handoff.RoleWorker,
			Replicas: e.Min, Template: template, Path: path.Child("template"),
		}}
		return job, nil
	}
	rank := int32(0)
	for i, t := range spec.Tasks {
		template, err := v.Doc.Pipe(yaml.Lookup("spec", "tasks", strconv.Itoa(i), "template"))
		if err != nil || template == nil {
			return nil, fmt.Errorf("spec.tasks[%d] has no template", i)
		}
		name, _ := v.Doc.Pipe(yaml.Lookup("spec", "tasks", strconv.Itoa(i), "name"))
		job.Workers = append(job.Workers, &Workers{
			Workload: owner.Name + "-" + t.Name, Role: t.Name, Task: t.Name, Type: t.Type, Named: name != nil,
			Replicas: t.Replicas, FirstRank: rank, Template: template, Path: path.Child("tasks").Index(i).Child("template"),
		})
		rank += t.Replicas
	}
	job.Volumes, _ = v.Doc.Pipe(yaml.Lookup("spec", "volumes"))
	return job, nil
}

// generation is the DIJob's metadata.generation, which a document
// exported from a cluster carries; 1, a new object's, otherwise.
func generation(doc *yaml.RNode) int64 {
	if n, _ := doc.Pipe(yaml.Lookup("metadata", "generation")); n != nil {
		if g, err := strconv.ParseInt(n.YNode().Value, 10, 64); err == nil && g > 0 {
			return g
		}
	}
	return 1
}
