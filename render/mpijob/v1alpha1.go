package mpijob

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/workload"
	"github.com/trainfn/trainfn/render/ynode"
	"github.com/trainfn/trainfn/schemas"
)

// v1alpha1Spec is what rendering reads of a kubeflow.org/v1alpha1 MPIJob
// spec (mpi-operator's first API), defaults and upstream's allocation filled in by the
// schema.
type v1alpha1Spec struct {
	ProcessingResourceType string `json:"processingResourceType"`
	Replicas               *int32 `json:"replicas"`
	GPUs                   *int32 `json:"gpus"`
	GPUsPerNode            *int32 `json:"gpusPerNode"`
	ProcessingUnits        *int32 `json:"processingUnits"`
	ProcessingUnitsPerNode *int32 `json:"processingUnitsPerNode"`
	SlotsPerWorker         *int32 `json:"slotsPerWorker"`
	LauncherOnMaster       bool   `json:"launcherOnMaster"`
	BackoffLimit           *int32 `json:"backoffLimit"`
	ActiveDeadlineSeconds  *int64 `json:"activeDeadlineSeconds"`

	allocation struct {
		Total   int32 `json:"total"`
		PerNode int32 `json:"perNode"`
		Workers int32 `json:"workers"`
	}
}

// controlPlaneRoles are the node-role labels of control-plane nodes: the
// one mpi-operator knew, and the one Kubernetes has used since 1.20.
var controlPlaneRoles = []string{"node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"}

// DecodeV1alpha1 reads a validated kubeflow.org/v1alpha1 MPIJob.
func DecodeV1alpha1(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	job, warnings, err := fromV1alpha1(v, opts)
	if err != nil {
		return nil, nil, err
	}
	return job, append(warnings, launchModeWarning(job, "mpi-operator v1alpha1")...), nil
}

func fromV1alpha1(v *schemas.Validated, opts options.Options) (*Job, []result.Warning, error) {
	var spec v1alpha1Spec
	if err := v.Decode("spec", &spec); err != nil {
		return nil, nil, fmt.Errorf("reading the defaulted spec: %w", err)
	}
	if err := v.Decode("spec.#allocation", &spec.allocation); err != nil {
		return nil, nil, fmt.Errorf("reading the allocation: %w", err)
	}
	owner, err := workload.OwnerOf(v.Doc)
	if err != nil {
		return nil, nil, err
	}
	template, err := v.Doc.Pipe(yaml.Lookup("spec", "template"))
	if err != nil || template == nil {
		return nil, nil, fmt.Errorf("spec has no template")
	}
	path := field.NewPath("spec", "template")

	// Upstream gives each worker the units allocated to it and the
	// launcher none: it only runs mpirun.
	units := spec.unitsPerWorker(template)
	worker := template.Copy()
	if spec.allocation.Total > 0 {
		if err := worker.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "containers", "0", "resources", "limits"),
			yaml.SetField(spec.ProcessingResourceType, yaml.NewRNode(ynode.Int(int64(units))))); err != nil {
			return nil, nil, err
		}
	}
	// One template serves every pod, and its command is the launcher's
	// mpirun: upstream's workers idled in its place, here they serve the
	// launch mode's remote shell.
	warnings := workerCommand(worker, path, opts)
	warnings = append(warnings, oneUnitWorkers(spec)...)
	launcher := template.Copy()
	if err := launcher.PipeE(yaml.Lookup("spec", "containers", "0"), yaml.Clear("resources")); err != nil {
		return nil, nil, err
	}
	if spec.LauncherOnMaster {
		replaced, err := onControlPlane(launcher, path)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, replaced...)
	}

	slots := units
	if spec.SlotsPerWorker != nil {
		slots = *spec.SlotsPerWorker
	} else if slots <= 0 {
		slots = 1
	}
	restart := "OnFailure"
	if p, _ := template.Pipe(yaml.Lookup("spec", "restartPolicy")); p != nil && yaml.GetValue(p) == "Never" {
		restart = "Never"
	}
	job := &Job{
		Owner:            owner,
		Implementation:   mpi.OpenMPI,
		SlotsPerWorker:   slots,
		SSHAuthMountPath: "/root/.ssh",
		Launcher:         workload.Replica{Replicas: 1, RestartPolicy: restart, Template: launcher, Path: path},
		Worker:           &workload.Replica{Replicas: spec.allocation.Workers, RestartPolicy: "Never", Template: worker, Path: path},
		RunPolicy: workload.RunPolicy{
			// Upstream stops the workers once the launcher is done.
			CleanPodPolicy:        "Running",
			BackoffLimit:          spec.BackoffLimit,
			ActiveDeadlineSeconds: spec.ActiveDeadlineSeconds,
		},
		Options:            opts,
		PodLabels:          func(role string) map[string]string { return v1alphaPodLabels(owner.Name, role) },
		WorkersPath:        field.NewPath("spec", sizedBy(spec)),
		CleanPodPolicyPath: field.NewPath("spec"),
		DeadlinePath:       field.NewPath("spec", "activeDeadlineSeconds"),
	}
	return job, warnings, nil
}

// workerCommand removes the command and arguments of the workers' first
// container, which the template gives for the launcher, so that the
// workers run what the launch mode needs instead, and says so.
func workerCommand(worker *yaml.RNode, path *field.Path, opts options.Options) []result.Warning {
	c, err := worker.Pipe(yaml.Lookup("spec", "containers", "0"))
	if err != nil || c == nil {
		return nil
	}
	var cleared []string
	for _, name := range []string{"command", "args"} {
		if c.Field(name) != nil {
			cleared = append(cleared, name)
			_ = c.PipeE(yaml.Clear(name))
		}
	}
	if len(cleared) == 0 {
		return nil
	}
	container := path.Child("spec", "containers").Index(0)
	return []result.Warning{{Field: container.Child(cleared[0]),
		Message: "run by the launcher alone: one template serves every pod of a v1alpha1 MPIJob, and mpi-operator's workers ran sleep 365d in place of its " +
			strings.Join(cleared, " and ") + "; here they run " + modeOf(opts.MPI.LaunchMode).serves}}
}

// oneUnitWorkers tells of a total split by the default of one unit per
// node: mpi-operator took the per-node amount from its own flags
// (--gpus-per-node, --processing-units-per-node, 1 unless set), which a
// cluster set once for its nodes, so a manifest written for it rarely
// says; split by 1, a total of 128 GPUs makes 128 one-GPU workers.
func oneUnitWorkers(s v1alpha1Spec) []result.Warning {
	if s.allocation.Total <= 1 || s.GPUsPerNode != nil || s.ProcessingUnitsPerNode != nil {
		return nil
	}
	total := sizedBy(s)
	perNode, flag := "processingUnitsPerNode", "--processing-units-per-node"
	if total == "gpus" {
		perNode, flag = "gpusPerNode", "--gpus-per-node"
	}
	return []result.Warning{{Field: field.NewPath("spec", total), Message: fmt.Sprintf(
		"splits into %d workers of 1 %s each: mpi-operator split a total by the per-node amount its deployment was given (%s, 1 unless set), "+
			"which the manifest does not say; set spec.%s to how many one node has (%s: %d with %s: 8 makes %d workers of 8)",
		s.allocation.Workers, s.ProcessingResourceType, flag, perNode, total, s.allocation.Total, perNode, max(s.allocation.Total/8, 1))}}
}

// sizedBy names the field that sizes the workers.
func sizedBy(s v1alpha1Spec) string {
	switch {
	case s.Replicas != nil:
		return "replicas"
	case s.GPUs != nil:
		return "gpus"
	default:
		return "processingUnits"
	}
}

// unitsPerWorker is upstream's allocation: the whole total on one worker
// when it fits, else the most a node holds; with replicas given, what the
// template's first container asks for.
func (s v1alpha1Spec) unitsPerWorker(template *yaml.RNode) int32 {
	if s.allocation.Total > 0 {
		return min(s.allocation.Total, s.allocation.PerNode)
	}
	n, err := template.Pipe(yaml.Lookup("spec", "containers", "0", "resources", "limits", s.ProcessingResourceType))
	if err != nil || n == nil {
		return 0
	}
	q, err := resource.ParseQuantity(yaml.GetValue(n))
	if err != nil {
		return 0
	}
	return int32(q.Value())
}

// onControlPlane lets the launcher run on a control-plane node, as
// launcherOnMaster asks: it tolerates their taint and requires their role.
// Like upstream, it replaces the template's own tolerations and affinity.
func onControlPlane(launcher *yaml.RNode, path *field.Path) ([]result.Warning, error) {
	tolerations, terms := ynode.Seq(), ynode.Seq()
	for _, role := range controlPlaneRoles {
		// Double-quoted, as earlier releases wrote it: upgrading trainfn
		// leaves the rendered output of an unchanged job byte for byte.
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: role, Style: yaml.DoubleQuotedStyle}
		tolerations.Content = append(tolerations.Content, ynode.Map("key", key, "operator", "Exists", "effect", "NoSchedule"))
		terms.Content = append(terms.Content, ynode.Map("matchExpressions", ynode.Seq(ynode.Map("key", yaml.CopyYNode(key), "operator", "Exists"))))
	}
	affinity := ynode.Map("nodeAffinity", ynode.Map("requiredDuringSchedulingIgnoredDuringExecution", ynode.Map("nodeSelectorTerms", terms)))
	spec, err := launcher.Pipe(yaml.Lookup("spec"))
	if err != nil {
		return nil, err
	}
	var warnings []result.Warning
	for _, f := range []struct {
		name  string
		value *yaml.RNode
	}{{"tolerations", yaml.NewRNode(tolerations)}, {"affinity", yaml.NewRNode(affinity)}} {
		name, value := f.name, f.value
		if old := spec.Field(name); old != nil {
			warnings = append(warnings, result.Warning{Field: path.Child("spec", name),
				Message: "replaced for the launcher: launcherOnMaster places it on a control-plane node"})
		}
		if err := spec.PipeE(yaml.SetField(name, value)); err != nil {
			return nil, err
		}
	}
	return warnings, nil
}
