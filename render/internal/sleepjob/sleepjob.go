// Package sleepjob is the smallest job kind: pods that sleep. It is what
// adding a kind to trainfn takes, a package that decodes, checks and
// builds; render's tests register it with one line and see every pass
// that all kinds share apply to it.
package sleepjob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
	"github.com/trainfn/trainfn/schemas"
)

// Schema is the kind's schema: structure, types and defaults.
var Schema = schemas.Schema{Package: "sleepjob", Definition: "#SleepJob", Source: `
#SleepJob: {
	apiVersion: "test.trainfn.dev/v1"
	kind:       "SleepJob"
	metadata: {
		name: string
		...
	}
	spec: {
		replicas: int & >=1 | *1
		seconds:  int & >=0
		image:    string | *"busybox:1.36"
		// minAvailable is how many sleepers must run together.
		minAvailable?: int
	}
	// What the API server and an operator wrote on a live object, which
	// a saved manifest carries along; the render ignores it.
	status?: {...}
}
`}

// Job is a SleepJob as rendering reads it.
type Job struct {
	workload.Owner
	Replicas, Seconds int32
	Image             string
	MinAvailable      *int32
	Template          *yaml.RNode
}

// Decode reads a validated SleepJob.
func Decode(v *schemas.Validated, _ options.Options) (*Job, []result.Warning, error) {
	owner, err := workload.OwnerOf(v.Doc)
	if err != nil {
		return nil, nil, err
	}
	j := &Job{Owner: owner}
	var spec struct {
		Replicas     int32  `json:"replicas"`
		Seconds      int32  `json:"seconds"`
		Image        string `json:"image"`
		MinAvailable *int32 `json:"minAvailable"`
	}
	if err := v.Decode("spec", &spec); err != nil {
		return nil, nil, err
	}
	j.Replicas, j.Seconds, j.Image, j.MinAvailable = spec.Replicas, spec.Seconds, spec.Image, spec.MinAvailable
	return j, nil, nil
}

// Check holds the one rule across fields.
func (j *Job) Check() field.ErrorList {
	if j.MinAvailable != nil && *j.MinAvailable > j.Replicas {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "minAvailable"), *j.MinAvailable, "must be at most spec.replicas")}
	}
	return nil
}

// Build renders an Indexed Job of sleepers, the gang's one member.
func (j *Job) Build() (result.Output, gang.Gang, field.ErrorList) {
	template := yaml.NewRNode(ynode.Map("spec", ynode.Map(
		"containers", ynode.Seq(ynode.Map("name", "sleep", "image", j.Image, "command", ynode.Seq("sleep", fmt.Sprint(j.Seconds)))))))
	t, warnings := j.PodTemplate(template, field.NewPath("spec"), handoff.RoleWorker, "Never")
	sleepers := j.Object("batch/v1", "Job", j.Name, handoff.RoleLabels(j.Name, handoff.RoleWorker), "spec", ynode.Map(
		"completionMode", "Indexed", "completions", j.Replicas, "parallelism", j.Replicas, "template", t.Node()))
	g := gang.Gang{Owner: j.Owner, Members: []gang.Member{{Workload: sleepers, Template: t, Pods: j.Replicas}}}
	if j.MinAvailable != nil {
		g.Policy = &gang.Policy{MinAvailable: j.MinAvailable}
	}
	return result.Output{Objects: []*yaml.RNode{sleepers}, Warnings: warnings}, g, nil
}
