package pytorchjob

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/waitfor"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
)

// Build expands a job into its objects: the Services, the master's Job and
// the workers' Jobs or StatefulSet; its gang is the master and the workers.
func (j *Job) Build() (result.Output, gang.Gang, field.ErrorList) {
	var out result.Output
	g := gang.Gang{Owner: j.Owner, Policy: j.SchedulingPolicy}
	out.Warnings = jobWarnings(j)

	// Templates first: the ports they declare go into every pod's
	// environment.
	var master, worker *pod.Template
	var p ports
	if j.Master != nil {
		var warnings []result.Warning
		master, warnings = template(j, j.Master, handoff.RoleMaster)
		out.Warnings = append(out.Warnings, warnings...)
		p.master, _ = master.Container(pytorchContainer).Port(portName)
	}
	if j.Worker != nil {
		var warnings []result.Warning
		worker, warnings = template(j, j.Worker, handoff.RoleWorker)
		out.Warnings = append(out.Warnings, warnings...)
		p.worker, _ = worker.Container(pytorchContainer).Port(portName)
	}

	out.Objects = append(out.Objects, j.services()...)
	if master != nil {
		out.Warnings = append(out.Warnings, dropHostname(master, "the Indexed Job names the master's host "+handoff.MasterHostname(j.Name))...)
		out.Warnings = append(out.Warnings, podNameWarnings(master, handoff.MasterHostname(j.Name))...)
		master.AddLabels(map[string]string{handoff.ReplicaIndexLabel: "0"}, true)
		setEnv(master, j.env(p, 0))
		m := j.Object("batch/v1", "Job", handoff.MasterName(j.Name), handoff.RoleLabels(j.Name, handoff.RoleMaster),
			"spec", jobSpec(j, j.Master, append(indexed(1), "template", master.Node())...))
		out.Objects = append(out.Objects, m)
		g.Members = append(g.Members, gang.Member{Workload: m, Template: master, Pods: 1})
	}
	if worker == nil {
		return out, g, nil
	}
	out.Warnings = append(out.Warnings, dropHostname(worker, "worker i's host is "+handoff.WorkersName(j.Name)+"-<i>")...)
	switch {
	case j.ranksPerWorker():
		out.Warnings = append(out.Warnings, podNameWarnings(worker, handoff.WorkersName(j.Name)+"-$((RANK - 1))")...)
	case !j.workersInStatefulSet():
		// A StatefulSet's pod is named as its host.
		out.Warnings = append(out.Warnings, podNameWarnings(worker, handoff.WorkersName(j.Name)+"-$JOB_COMPLETION_INDEX")...)
	}
	if host, name := j.waitsFor(); host != "" {
		if err := worker.AddInitContainer(waitFor(worker, name, host, worker.Container(pytorchContainer))); err != nil {
			return result.Output{}, gang.Gang{}, field.ErrorList{err}
		}
	}
	if j.ranksPerWorker() {
		for i := range int(j.Worker.Replicas) {
			t := worker.Copy()
			t.Set("hostname", ynode.String(handoff.WorkerHostname(j.Name, i)))
			t.AddLabels(map[string]string{handoff.ReplicaIndexLabel: strconv.Itoa(i)}, true)
			setEnv(t, j.env(p, i+1))
			workers := j.Object("batch/v1", "Job", handoff.WorkerHostname(j.Name, i), handoff.RoleLabels(j.Name, handoff.RoleWorker),
				"spec", jobSpec(j, j.Worker,
					"completions", 1,
					"parallelism", 1,
					"podReplacementPolicy", "Failed",
					"template", t.Node()))
			j.handOff(workers)
			out.Objects = append(out.Objects, workers)
			g.Members = append(g.Members, gang.Member{Workload: workers, Template: t, Pods: 1})
		}
	} else if j.workersInStatefulSet() {
		setEnv(worker, j.env(p, noRank))
		objects, warnings, err := j.statefulWorkers(worker)
		if err != nil {
			return result.Output{}, gang.Gang{}, field.ErrorList{err}
		}
		out.Warnings = append(out.Warnings, warnings...)
		out.Objects = append(out.Objects, objects...)
		g.Members = append(g.Members, gang.Member{Workload: objects[0], Template: worker, Pods: j.Worker.Replicas, Resized: true})
	} else {
		setEnv(worker, j.env(p, noRank))
		n := j.Worker.Replicas
		fields := indexed(n)
		if j.scaledAtRunTime() {
			// Under Kueue: the count, parallelism, is left to run time,
			// within the indexes the bounds allow.
			fields = indexedUpTo(j.Scaling.Max)
		}
		if j.Elastic != nil {
			// Agents leave the rendezvous together (torchrun's exit
			// barrier), so one that succeeds means training is over; an
			// index scaled away, or never started, does not hold the Job.
			fields = append(fields, "successPolicy", ynode.Map("rules", ynode.Seq(ynode.Map("succeededCount", 1))))
		}
		workers := j.Object("batch/v1", "Job", handoff.WorkersName(j.Name), handoff.RoleLabels(j.Name, handoff.RoleWorker),
			"spec", jobSpec(j, j.Worker, append(fields, "template", worker.Node())...))
		j.handOff(workers)
		out.Objects = append(out.Objects, workers)
		g.Members = append(g.Members, gang.Member{Workload: workers, Template: worker, Pods: n, Resized: j.scaledAtRunTime()})
	}
	return out, g, nil
}

// statefulWorkers are the workers of a job scaled at run time through a
// StatefulSet, first, and its autoscaler, if any. Their agents run once
// (runAgentOnce): the StatefulSet would restart one that succeeded.
func (j *Job) statefulWorkers(worker *pod.Template) ([]*yaml.RNode, []result.Warning, *field.Error) {
	name := handoff.WorkersName(j.Name)
	warnings, err := runAgentOnce(worker, worker.Container(pytorchContainer), name)
	if err != nil {
		return nil, nil, err
	}
	workers := j.StatefulSet(name, handoff.RoleWorker, nil, worker)
	j.handOff(workers)
	objects := []*yaml.RNode{workers}
	if hpa := j.autoscaler(); hpa != nil {
		objects = append(objects, hpa)
	}
	return objects, warnings, nil
}

// handOff annotates a workers' workload with what the reconciler needs at
// run time: what ends the job (the master, else, for workers scaled at run
// time, the first agent to succeed, since agents leave together), what
// then happens to the workers, and the bounds of an elastic count.
func (j *Job) handOff(workers *yaml.RNode) {
	a := map[string]string{handoff.CleanPodPolicy: j.RunPolicy.CleanPodPolicy}
	switch {
	case j.Master != nil:
		a[handoff.EndsWith] = handoff.EndsWithJob(handoff.MasterName(j.Name))
	case j.scaledAtRunTime():
		a[handoff.EndsWith] = handoff.EndsWithContainer(pytorchContainer)
	}
	if j.scaledAtRunTime() {
		a[handoff.ElasticWorkers] = j.Scaling.String()
		a[handoff.Workers] = strconv.Itoa(int(j.Worker.Replicas))
	}
	workload.Annotate(workers, a)
}

// autoscaler is what training-operator made of elasticPolicy.metrics: a
// HorizontalPodAutoscaler, here of the workers' StatefulSet, through its
// scale subresource, within the job's elastic bounds.
func (j *Job) autoscaler() *yaml.RNode {
	if j.Elastic.Metrics == nil {
		return nil
	}
	return j.Object("autoscaling/v2", "HorizontalPodAutoscaler", handoff.WorkersName(j.Name), handoff.RoleLabels(j.Name, handoff.RoleWorker),
		"spec", ynode.Map(
			"scaleTargetRef", ynode.Map("apiVersion", "apps/v1", "kind", "StatefulSet", "name", handoff.WorkersName(j.Name)),
			"minReplicas", j.Scaling.Min,
			"maxReplicas", j.Scaling.Max,
			"metrics", yaml.CopyYNode(j.Elastic.Metrics)))
}

// Check reports what the schema cannot say and rendering relies on.
func (j *Job) Check() field.ErrorList {
	var errs field.ErrorList
	specs := field.NewPath("spec", "pytorchReplicaSpecs")
	if j.Elastic != nil && j.Worker == nil {
		errs = append(errs, field.Required(specs.Child("Worker"), "needed with elasticPolicy"))
	}
	if s := j.Scaling; s != nil {
		at := field.NewPath("metadata", "annotations").Key(options.ElasticWorkersAnnotation)
		switch e := j.Elastic; {
		case e == nil:
			errs = append(errs, field.Invalid(at, s.String(), "needs spec.elasticPolicy: only torchrun's rendezvous lets workers join and leave a running job"))
		case s.Min < e.MinReplicas || s.Max > e.MaxReplicas:
			errs = append(errs, field.Invalid(at, s.String(), fmt.Sprintf("must lie within elasticPolicy's [%d, %d], the bounds torchrun admits", e.MinReplicas, e.MaxReplicas)))
		case j.Worker.Replicas < s.Min || j.Worker.Replicas > s.Max:
			errs = append(errs, field.Invalid(specs.Child("Worker", "replicas"), j.Worker.Replicas, "must be within the elastic bounds "+s.String()+" of "+options.ElasticWorkersAnnotation))
		}
	}
	if e := j.Elastic; e != nil && e.Standalone && e.MinReplicas > 1 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "elasticPolicy", "standalone"), true, fmt.Sprintf(
			"torchrun's --standalone meets on each pod's own localhost, where no other pod joins, so with minReplicas %d it waits for nodes that never come: "+
				"set minReplicas to 1, or drop standalone to meet at PET_RDZV_ENDPOINT", e.MinReplicas)))
	}
	for _, r := range []*workload.Replica{j.Master, j.Worker} {
		if r == nil {
			continue
		}
		t := pod.NewTemplate(r.Template, r.Path)
		if t.Container(pytorchContainer) == nil {
			errs = append(errs, field.Required(r.Path.Child("spec", "containers"), "a container named "+pytorchContainer))
		}
		errs = append(errs, t.ResourceErrors()...)
	}
	return errs
}

// services are the headless Services that name the job's pods:
// <job>-pytorch, under which every pod's hostname resolves, and, as
// training-operator creates one for every replica, <job>-master-0 and
// <job>-worker-<i>, each of one pod. Launchers address replicas by those
// names (MASTER_ADDR, --rdzv-endpoint=<job>-worker-0, --master_addr
// <job>-worker-0), which are also the pods' hostnames, which torchrun and
// scripts compare addresses with; they resolve in any namespace.
func (j *Job) services() []*yaml.RNode {
	// Its kind too: a TrainJob of the same name has pods of the same job
	// name, which this Service would otherwise count as its own.
	all := handoff.JobLabels(j.Name)
	all[handoff.KindLabel] = handoff.PyTorchJobKind
	services := []*yaml.RNode{j.HeadlessService(j.ServiceName(), all)}
	if j.Master != nil {
		services = append(services, j.HeadlessService(handoff.MasterHostname(j.Name), handoff.RoleLabels(j.Name, handoff.RoleMaster)))
	}
	if j.Worker == nil {
		return services
	}
	if !j.ReplicaServices {
		// The rendezvous' name alone, where workers meet by default.
		if j.Elastic != nil && j.Elastic.RDZVHost == nil {
			services = append(services, j.workerService(0))
		}
		return services
	}
	n := j.Worker.Replicas
	if j.scaledAtRunTime() {
		// Every index the workers may reach has its name from the start.
		n = j.Scaling.Max
	}
	for i := range int(n) {
		services = append(services, j.workerService(i))
	}
	return services
}

// workerService is worker i's Service, which selects its one pod.
func (j *Job) workerService(i int) *yaml.RNode {
	selector := handoff.RoleLabels(j.Name, handoff.RoleWorker)
	switch {
	case j.workersInStatefulSet():
		selector[appsv1.StatefulSetPodNameLabel] = handoff.WorkerHostname(j.Name, i)
	case j.ranksPerWorker():
		selector[handoff.ReplicaIndexLabel] = strconv.Itoa(i)
	default:
		selector[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(i)
	}
	return j.HeadlessService(handoff.WorkerHostname(j.Name, i), selector)
}

// indexed are the fields of an Indexed Job of n pods: pod i's hostname is
// <Job name>-i, and a failed pod is replaced only once it is gone, so that
// two pods never share a hostname.
func indexed(n int32) []any {
	return []any{
		"completionMode", "Indexed",
		"completions", n,
		"parallelism", n,
		"podReplacementPolicy", "Failed",
	}
}

// indexedUpTo are the fields of an Indexed Job whose pods may have the
// indexes below most, and whose count, parallelism, is left to whoever
// scales it, so that re-applying the output never resets it.
func indexedUpTo(most int32) []any {
	return []any{
		"completionMode", "Indexed",
		"completions", most,
		"podReplacementPolicy", "Failed",
	}
}

// template prepares a replica's pod template: labels, restart policy, DNS
// and the pytorch container's port.
func template(job *Job, r *workload.Replica, role string) (*pod.Template, []result.Warning) {
	restart := r.RestartPolicy
	if role == handoff.RoleWorker && job.workersInStatefulSet() {
		// A StatefulSet restarts its pods, whatever the replica says.
		restart = "Always"
	} else if restart == "ExitCode" {
		// The Job's pod failure policy tells exit codes apart; it needs
		// pods that are never restarted in place.
		restart = "Never"
	}
	t, warnings := job.PodTemplate(r.Template, r.Path, role, restart)
	// training-operator's replica type; its job-role is master on the
	// master alone, as here.
	t.AddLabels(map[string]string{handoff.ReplicaTypeLabel: role}, true)
	t.Container(pytorchContainer).SetDefaultPort(portName, defaultPort)
	return t, warnings
}

// jobSpec is a Job's spec: the run policy, then fields, then, for the
// ExitCode restart policy, the pod failure policy that implements it.
func jobSpec(job *Job, r *workload.Replica, fields ...any) *yaml.Node {
	if r.RestartPolicy == "ExitCode" {
		fields = append(fields, "podFailurePolicy", exitCodePolicy())
	}
	return job.RunPolicy.JobSpec(fields...)
}

// exitCodePolicy is training-operator's ExitCode restart policy as a pod
// failure policy: exit codes 1-127 of the pytorch container are the
// program's own failures and fail the Job; 128-255 (killed by a signal) and
// disruptions are retried, the former within the backoff limit.
func exitCodePolicy() *yaml.Node {
	values := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for code := int32(1); code <= 127; code++ {
		values.Content = append(values.Content, ynode.Of(code))
	}
	return ynode.Map("rules", ynode.Seq(
		ynode.Map("action", "FailJob", "onExitCodes", ynode.Map("containerName", pytorchContainer, "operator", "In", "values", values)),
		workload.DisruptionRule(),
	))
}

// waitsFor is the host a worker waits to resolve before it starts, and the
// name of the init container that waits: the master when there is one, else
// the rendezvous of an elastic job. Otherwise neither.
func (j *Job) waitsFor() (host, container string) {
	switch {
	case j.Master != nil:
		return handoff.MasterHostname(j.Name), "wait-for-master"
	case j.Elastic != nil:
		return j.rendezvousHost(), "wait-for-rendezvous"
	}
	return "", ""
}

// waitFor is an init container that holds a worker back until host
// resolves: a worker that starts first would fail to reach it, and could
// fail its way through the Job's backoff limit. It runs in the pytorch
// container's image, as that container runs, so it needs no other image,
// with none of its privileges (pod.CopiedSecurity): it only resolves a name.
func waitFor(t *pod.Template, name, host string, main *pod.Container) *yaml.Node {
	return ynode.Map(
		"name", name,
		"image", yaml.CopyYNode(main.Get("image")),
		"imagePullPolicy", yaml.CopyYNode(main.Get("imagePullPolicy")),
		"command", []string{"/bin/sh", "-c", waitfor.HostScript, name, host},
		"resources", yaml.CopyYNode(main.Get("resources")),
		"securityContext", t.CopiedSecurity(main, false),
	)
}

func setEnv(t *pod.Template, env []envVar) {
	for _, c := range t.Containers() {
		for _, e := range env {
			c.AddEnv(e.Name, e.Value)
		}
	}
}

// dropHostname removes a hostname the template sets: the Job names the host.
func dropHostname(t *pod.Template, why string) []result.Warning {
	if t.Remove("hostname") == nil {
		return nil
	}
	return []result.Warning{{Field: t.Path("hostname"), Message: "ignored: " + why}}
}

// jobWarnings are what a user should know about a job that renders but may
// not run as meant.
func jobWarnings(job *Job) []result.Warning {
	var warnings []result.Warning
	if e := job.Elastic; e != nil {
		switch {
		case e.Metrics != nil && job.Scaling == nil:
			warnings = append(warnings, result.Warning{
				Field: field.NewPath("spec", "elasticPolicy", "metrics"),
				Message: "no autoscaler is rendered: the worker count is fixed unless the job sets the annotation " +
					options.ElasticWorkersAnnotation + " (MIN:MAX), which runs the workers as a StatefulSet an autoscaler can scale " +
					"(under Kueue, as an Indexed Job resized through its parallelism, which no autoscaler can)",
			})
		case e.Metrics != nil && !job.workersInStatefulSet():
			warnings = append(warnings, result.Warning{
				Field: field.NewPath("spec", "elasticPolicy", "metrics"),
				Message: "no autoscaler is rendered: under Kueue the workers are an Indexed Job, " +
					"which has no scale subresource for an autoscaler; resize it through its parallelism",
			})
		}
		if n := job.Worker.Replicas; n < e.MinReplicas || n > e.MaxReplicas {
			warnings = append(warnings, result.Warning{
				Field: field.NewPath("spec", "pytorchReplicaSpecs", "Worker", "replicas"),
				Message: fmt.Sprintf("%d workers start, outside elasticPolicy's [%d, %d]: torchrun waits for at least %d and admits at most %d",
					n, e.MinReplicas, e.MaxReplicas, e.MinReplicas, e.MaxReplicas),
			})
		}
		if e.Standalone && (job.replicas() > 1 || e.MaxReplicas > 1) {
			warnings = append(warnings, result.Warning{
				Field:   field.NewPath("spec", "elasticPolicy", "standalone"),
				Message: "each pod's torchrun meets only itself on its own localhost (--standalone): every pod of the job, and any worker added later, trains alone",
			})
		}
		if (e.RDZVBackend == "etcd" || e.RDZVBackend == "etcd-v2") && e.RDZVHost == nil {
			warnings = append(warnings, result.Warning{
				Field: field.NewPath("spec", "elasticPolicy", "rdzvBackend"),
				Message: fmt.Sprintf("the %s rendezvous meets in an etcd server, and without rdzvHost it is sought at %s, as training-operator set it, where no etcd runs: "+
					"set rdzvHost and rdzvPort to your etcd's Service, or use rdzvBackend c10d, which worker 0's torchrun serves itself", e.RDZVBackend, job.rendezvousHost()),
			})
		}
		if job.Master != nil {
			warnings = append(warnings, result.Warning{
				Field: field.NewPath("spec", "pytorchReplicaSpecs", "Worker"),
				Message: "workers of an elastic job get no RANK or PET_NODE_RANK: they run as one Indexed Job, " +
					"and torchrun's rendezvous assigns their ranks",
			})
		}
	}
	if job.RunPolicy.CleanPodPolicy != "None" && job.RunPolicy.ActiveDeadlineSeconds == nil {
		warnings = append(warnings, result.Warning{
			Field: field.NewPath("spec", "runPolicy", "cleanPodPolicy"),
			Message: job.RunPolicy.CleanPodPolicy + " is carried out at run time by trainfn's reconciler; without it the other pods keep running " +
				"after the job ends, until the Jobs are deleted (runPolicy.activeDeadlineSeconds bounds them)",
		})
	}
	return warnings
}
