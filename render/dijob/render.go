package dijob

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// Build expands a job into its objects: the Service, then a workload per
// kind of worker; its gang is every worker.
func (j *Job) Build() (result.Output, gang.Gang, field.ErrorList) {
	var out result.Output
	g := gang.Gang{Owner: j.Owner}
	out.Objects = append(out.Objects, j.service())
	fixed := j.fixedEnv()
	for _, w := range j.Workers {
		t, warnings := j.template(w, fixed)
		out.Warnings = append(out.Warnings, warnings...)
		workers := j.workload(w, t)
		out.Objects = append(out.Objects, workers)
		g.Members = append(g.Members, gang.Member{Workload: workers, Template: t, Pods: w.Replicas, Resized: j.Preemptible})
	}
	return out, g, nil
}

// service is the headless Service <job> under which every worker's
// hostname resolves, exposing the DI port as DI-orchestrator's does.
func (j *Job) service() *yaml.RNode {
	svc := j.HeadlessService(handoff.ServiceName(j.Name), handoff.JobLabels(j.Name))
	spec := svc.Field("spec").Value.YNode()
	spec.Content = append(spec.Content, ynode.String("ports"),
		ynode.Seq(ynode.Map("name", handoff.DIPortName, "port", handoff.DIPort)))
	return svc
}

// template prepares the pod template of a kind of workers: labels, restart
// policy, DNS, the DI port, the job's volumes, the variables and the
// prelude that computes the rank's.
func (j *Job) template(w *Workers, fixed [][2]string) (*pod.Template, []result.Warning) {
	restart := "Never"
	if j.Preemptible {
		// A StatefulSet restarts its pods, whatever the template says.
		restart = "Always"
	}
	t, warnings := j.PodTemplate(w.Template, w.Path, w.Role, restart)
	if j.Volumes != nil {
		for _, v := range j.Volumes.YNode().Content {
			// check made sure the names are free.
			_ = t.AddVolume(yaml.CopyYNode(v))
		}
	}
	main := main(t)
	main.SetDefaultPort(handoff.DIPortName, handoff.DIPort)
	j.setEnv(t, fixed)
	args := preludeArgs{firstRank: w.FirstRank, hostPrefix: w.Workload + "-", service: handoff.ServiceName(j.Name)}
	if e := j.Engine; e != nil {
		args.parallelWorkers = strconv.Itoa(int(e.ParallelWorkers))
		args.topology = e.Topology
	}
	for _, c := range t.Containers() {
		if c.Get("command") == nil {
			warnings = append(warnings, result.Warning{Field: c.Path(),
				Message: "has no command, so it cannot get " + rankNames() + ", which trainfn computes before the command runs"})
			continue
		}
		prelude(c, args)
	}
	if j.Preemptible {
		t.Set("schedulingGates", ynode.Seq(ynode.Map("name", handoff.AllocationGate)))
	}
	return t, warnings
}

// workload runs a kind of workers: an Indexed Job of a fixed count, or,
// for a preemptible job, a StatefulSet whose count is left to run time.
// Either names pod i's host <workload>-i.
func (j *Job) workload(w *Workers, t *pod.Template) *yaml.RNode {
	var obj *yaml.RNode
	if j.Preemptible {
		obj = j.StatefulSet(w.Workload, w.Role, nil, t)
	} else {
		obj = j.Object("batch/v1", "Job", w.Workload, handoff.RoleLabels(j.Name, w.Role),
			"spec", ynode.Map(
				"backoffLimit", j.BackoffLimit,
				"completionMode", "Indexed",
				"completions", w.Replicas,
				"parallelism", w.Replicas,
				"podReplacementPolicy", "Failed",
				// DI-orchestrator restarts a worker that exits unexpectedly; an
				// eviction, a preemption or a drain should cost no retry.
				"podFailurePolicy", workload.DisruptionIgnored(),
				"template", t.Node()))
	}
	j.handOff(obj, w)
	return obj
}

// handOff annotates a workload with what the reconciler and the DI server
// read at run time.
func (j *Job) handOff(obj *yaml.RNode, w *Workers) {
	a := map[string]string{
		handoff.DIJobGeneration: strconv.FormatInt(j.Generation, 10),
		handoff.FirstRank:       strconv.Itoa(int(w.FirstRank)),
		handoff.Priority:        j.Priority,
		handoff.CleanPodPolicy:  j.CleanPodPolicy,
	}
	if j.Preemptible {
		a[handoff.ElasticWorkers] = handoff.Bounds{Min: j.Engine.Min, Max: j.Engine.Max}.String()
		a[handoff.Workers] = strconv.Itoa(int(j.Engine.Min))
		// A StatefulSet restarts a worker that exits; the first to succeed
		// ends the job, as DI-engine's workers finish together.
		a[handoff.EndsWith] = handoff.EndsWithContainer(mainName(w))
	}
	workload.Annotate(obj, a)
}

// main is the container DI-orchestrator gives the DI port.
func main(t *pod.Template) *pod.Container {
	if c := t.Container(mainContainer); c != nil {
		return c
	}
	return t.Main()
}

func mainName(w *Workers) string {
	return main(pod.NewTemplate(w.Template, w.Path)).Get("name").Value
}

func rankNames() string {
	return fmt.Sprintf("%s, %s and %s", rankVariables[0], rankVariables[1], rankVariables[2])
}
