package trainjob

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Environment variables Trainer v2.3.0 sets itself and its webhook refuses
// in trainer.env (pkg/constants/constants.go:300-306): a user's value
// would silently replace the one the framework needs.
var (
	torchReservedEnv   = sets.New("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")
	mpiReservedEnv     = sets.New("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args", "OMPI_MCA_orte_keep_fqdn_hostnames", "OMPI_MCA_orte_set_default_slots")
	xgboostReservedEnv = sets.New("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")
)

// initializerVolume is the volume an initializer writes the data or model
// into, which the trainer's node mounts (Trainer's VolumeNameInitializer).
const initializerVolume = "initializer"

// webhookErrors are the rules Trainer v2.3.0's TrainJob webhook enforces
// in Go (its plugins' Validate methods), in its words: Trainer refuses such
// a TrainJob when it is applied, so trainfn refuses to render it. They are
// checked against the runtime as the job patches it, as Trainer does.
func (j *Job) webhookErrors(p *plan) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, j.initializerErrors(p)...)
	errs = append(errs, j.managerErrors()...)
	errs = append(errs, j.patchEnvErrors()...)
	errs = append(errs, j.reservedEnvErrors(p)...)
	errs = append(errs, j.mpiNodeErrors(p)...)
	errs = append(errs, j.volcanoErrors(p)...)
	errs = append(errs, j.torchTuneErrors(p)...)
	return errs
}

// initializerErrors: a dataset or model to initialize needs the runtime's
// initializer job of that name, its container of that name, and that
// container's mount of the initializer volume; without them Trainer would
// start the trainer with no data (jobset.go:112-169).
func (j *Job) initializerErrors(p *plan) field.ErrorList {
	in := j.Spec.Initializer
	if in == nil {
		return nil
	}
	var errs field.ErrorList
	for _, step := range []struct {
		set    bool
		name   string
		config string
	}{{in.Dataset != nil, datasetInitializer, "datasetConfig"}, {in.Model != nil, modelInitializer, "modelConfig"}} {
		if !step.set {
			continue
		}
		var detail string
		job := p.index(step.name)
		c := p.container(job, step.name)
		switch {
		case job < 0:
			detail = fmt.Sprintf("must have %s job when trainJob is configured with input %s", step.name, step.config)
		case c == nil && p.initContainer(job, step.name) == nil:
			detail = fmt.Sprintf("must have container with name - %s in the %s job", step.name, step.name)
		case c == nil || !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == initializerVolume }):
			detail = fmt.Sprintf("must have volumeMount with name - %s in container %s of the %s job", initializerVolume, step.name, step.name)
		default:
			continue
		}
		errs = append(errs, field.Invalid(field.NewPath("spec", "runtimeRef"), j.Spec.RuntimeRef.String(), detail))
	}
	return errs
}

// managerErrors: each patch's manager is a domain-prefixed path, as
// Kubernetes' field managers are (jobset.go:176).
func (j *Job) managerErrors() field.ErrorList {
	var errs field.ErrorList
	for i, patch := range j.Spec.RuntimePatches {
		errs = append(errs, validation.IsDomainPrefixedPath(field.NewPath("spec", "runtimePatches").Index(i).Child("manager"), patch.Manager)...)
	}
	return errs
}

// patchEnvErrors: the trainer's and the initializers' env is the TrainJob's
// own to set (spec.trainer.env, spec.initializer.*.env), not a patch's
// (jobset.go:203-206).
func (j *Job) patchEnvErrors() field.ErrorList {
	var errs field.ErrorList
	for _, c := range j.patchedContainers() {
		if c.list != "containers" || !c.hasEnv {
			continue
		}
		if c.name == nodeName || c.name == datasetInitializer || c.name == modelInitializer {
			errs = append(errs, field.Forbidden(c.path.Child("env"), fmt.Sprintf(
				"must not have envs for the %s, %s, %s containers: set them in spec.trainer.env or spec.initializer's env",
				datasetInitializer, modelInitializer, nodeName)))
		}
	}
	return errs
}

// reservedEnvErrors: trainer.env must not set what the framework sets
// (torch.go:65-77, mpi.go:96-107, xgboost.go:59-69).
func (j *Job) reservedEnvErrors(p *plan) field.ErrorList {
	t := j.Spec.Trainer
	if t == nil {
		return nil
	}
	at := field.NewPath("spec", "trainer", "env")
	var reserved sets.Set[string]
	switch m := p.mlPolicy; {
	case m.Torch != nil:
		reserved = torchReservedEnv
	case m.MPI != nil:
		reserved = mpiReservedEnv
	case m.XGBoost != nil:
		var errs field.ErrorList
		for i, e := range t.Env {
			if xgboostReservedEnv.Has(e.Name) {
				errs = append(errs, field.Forbidden(at.Index(i), fmt.Sprintf("%s is reserved for the XGBoost runtime", e.Name)))
			}
		}
		return errs
	default:
		return nil
	}
	found := sets.New[string]()
	for _, e := range t.Env {
		if reserved.Has(e.Name) {
			found.Insert(e.Name)
		}
	}
	if found.Len() == 0 {
		return nil
	}
	names := make([]string, 0, len(t.Env))
	for _, e := range t.Env {
		names = append(names, e.Name)
	}
	return field.ErrorList{field.Invalid(at, names, fmt.Sprintf("must not have reserved envs, invalid envs configured: %v", sets.List(found)))}
}

// mpiNodeErrors: a launcher that is a node too needs both the launcher and
// the node jobs to spread more than one node over (mpi.go:89-94).
func (j *Job) mpiNodeErrors(p *plan) field.ErrorList {
	t, m := j.Spec.Trainer, p.mlPolicy.MPI
	if t == nil || m == nil || !m.RunLauncherAsNode || t.NumNodes == nil || *t.NumNodes < 2 {
		return nil
	}
	if p.index(launcherName) >= 0 && p.index(nodeName) >= 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "numNodes"), *t.NumNodes,
		"must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node")}
}

// volcanoErrors: a Volcano queue annotation, when written, names a queue
// (volcano.go:97-102); an empty one is not the default queue.
func (j *Job) volcanoErrors(p *plan) field.ErrorList {
	if p.podGroupPolicy == nil || p.podGroupPolicy.Volcano == nil {
		return nil
	}
	if q, ok := p.annotations[volcanoQueueAnnotation]; ok && q == "" {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "annotations").Key(volcanoQueueAnnotation), q,
			"Volcano queue name must not be empty: it is written in the runtime's spec.template.metadata.annotations or a runtimePatch's")}
	}
	return nil
}

const volcanoQueueAnnotation = "scheduling.volcano.sh/queue-name"

// patchedContainer is a container a runtime patch changes.
type patchedContainer struct {
	// patch is the index of the runtime patch; job is the replicated job
	// it patches; list is containers or initContainers.
	patch           int
	job, list, name string
	hasEnv          bool
	path            *field.Path
}

// patchedContainers are the containers the job's runtimePatches change, in
// their order, read from the patches as written.
func (j *Job) patchedContainers() []patchedContainer {
	var out []patchedContainer
	for i, patch := range j.Spec.RuntimePatches {
		if patch.TrainingRuntimeSpec == nil || patch.TrainingRuntimeSpec.Template == nil {
			continue
		}
		jobs, _ := patch.TrainingRuntimeSpec.Template.Spec["replicatedJobs"].([]any)
		for k, r := range jobs {
			rjob, _ := r.(map[string]any)
			name, _ := rjob["name"].(string)
			podSpec := lookupMap(rjob, "template", "spec", "template", "spec")
			at := field.NewPath("spec", "runtimePatches").Index(i).Child("trainingRuntimeSpec", "template", "spec", "replicatedJobs").Index(k).
				Child("template", "spec", "template", "spec")
			for _, list := range []string{"initContainers", "containers"} {
				cs, _ := podSpec[list].([]any)
				for c, item := range cs {
					container, _ := item.(map[string]any)
					cname, _ := container["name"].(string)
					env, _ := container["env"].([]any)
					out = append(out, patchedContainer{patch: i, job: name, list: list, name: cname, hasEnv: len(env) > 0, path: at.Child(list).Index(c)})
				}
			}
		}
	}
	return out
}

// lookupMap walks nested mappings; nil when one is missing.
func lookupMap(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}
