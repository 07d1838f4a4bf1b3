package dijob

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/ynode"
)

// Variables trainfn adds for the prelude and DI_JOB_ID.
const (
	// namespaceVariable is the pod's namespace, which DI_JOB_ID starts
	// with: read in the pod, since the output names no namespace.
	namespaceVariable = "TRAINFN_NAMESPACE"
	// indexVariable is the pod's index in its workload.
	indexVariable = "TRAINFN_POD_INDEX"
)

// indexLabel is the label carrying a pod's index: the Job controller's on
// an Indexed Job's pods, the StatefulSet controller's on its pods.
func (j *Job) indexLabel() string {
	if j.Preemptible {
		return appsv1.PodIndexLabel
	}
	return batchv1.JobCompletionIndexAnnotation
}

// setEnv gives every container of a template DI-engine's variables that
// are the same for every pod of the job (fixed, from fixedEnv), and the
// two the prelude reads. A value the user set wins.
func (j *Job) setEnv(t *pod.Template, fixed [][2]string) {
	for _, c := range t.Containers() {
		c.AddEnvFrom(namespaceVariable, fieldRef("metadata.namespace"))
		c.AddEnvFrom(indexVariable, fieldRef("metadata.labels['"+j.indexLabel()+"']"))
		for _, e := range fixed {
			c.AddEnv(e[0], e[1])
		}
	}
}

func fieldRef(path string) *yaml.Node {
	return ynode.Map("fieldRef", ynode.Map("fieldPath", path))
}

// fixedEnv are the variables whose values every pod of the job shares, in
// order: computed once, since a job of tasks lists every worker's host.
func (j *Job) fixedEnv() [][2]string {
	env := [][2]string{
		// Kubernetes substitutes $(VAR) of a variable defined before.
		{"DI_JOB_ID", fmt.Sprintf("$(%s).%s.%d", namespaceVariable, j.Name, j.Generation)},
		{"DI_JOB_GENERATION", fmt.Sprint(j.Generation)},
		{"DI_SERVER_URL", j.Options.DI.ServerURL},
	}
	if e := j.Engine; e != nil {
		ports := make([]string, e.ParallelWorkers)
		for i := range ports {
			ports[i] = strconv.Itoa(handoff.DIPort + i)
		}
		return append(env,
			[2]string{"DI_PARALLEL_WORKERS_ARG", fmt.Sprintf("--parallel-workers=%d", e.ParallelWorkers)},
			[2]string{"DI_PORTS_ARG", "--ports=" + strings.Join(ports, ",")})
	}
	env = append(env, [2]string{"DI_NODES", strings.Join(j.hosts(func(*Workers) bool { return true }), ",")})
	// Every task's hosts, each under its task's name, as DI-orchestrator
	// sets a pod's own: the hosts of the tasks of the same type.
	for _, task := range j.Workers {
		sameType := j.hosts(func(o *Workers) bool { return o.Type == task.Type })
		env = append(env, [2]string{nodesVariable(task.Task), strings.Join(sameType, ",")})
	}
	return env
}

// nodesVariable is DI_<TASK>_NODES.
func nodesVariable(task string) string {
	return "DI_" + strings.ToUpper(strings.ReplaceAll(task, "-", "_")) + "_NODES"
}

// hosts are the hostnames, under the job's Service, of the workers of the
// kinds selected, in rank order.
func (j *Job) hosts(selected func(*Workers) bool) []string {
	var out []string
	for _, w := range j.Workers {
		if !selected(w) {
			continue
		}
		for i := range int(w.Replicas) {
			out = append(out, handoff.DNSName(j.Name, w.Workload+"-"+strconv.Itoa(i)))
		}
	}
	return out
}
