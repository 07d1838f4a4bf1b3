package mpijob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
)

// maxRoleNameBytes bounds the worker names a Role lists, twice over, well
// inside what the API server stores in one object.
const maxRoleNameBytes = 256 << 10

// launcherRBAC lets the launcher of a KubectlExec job exec into its own
// workers and nothing else (workload.ExecRules).
//
// An elastic job's Role names every worker it may scale to: its
// StatefulSet names pods as their hosts. Other workers (under Kueue, an
// elastic job's too) are an Indexed Job, whose pods' names the Job
// controller makes up, so that a lost worker is made again and the
// workers stop when the job ends: its Role cannot name them, lets the
// launcher find (list) and exec into the namespace's pods, and says what
// the workers' pods' names are, <job>-worker-<i>-<5 characters>, for the
// admission policy that holds the launcher to them (handoff.ExecPods).
func launcherRBAC(job *Job) ([]*yaml.RNode, *field.Error) {
	name := handoff.LauncherName(job.Name)
	own := handoff.RoleLabels(job.Name, handoff.RoleLauncher)
	e := job.elastic()
	if !job.workersInStatefulSet() {
		workers := handoff.WorkersName(job.Name)
		completions := job.workers()
		if e != nil {
			completions = int(e.Max)
		}
		return job.ExecAccess(name, own, handoff.IndexedPodNames(completions, workers)), nil
	}
	names := make([]string, e.Max)
	size := 0
	for i := range names {
		names[i] = handoff.WorkerHostname(job.Name, i)
		size += len(names[i]) + 4
	}
	if size > maxRoleNameBytes {
		return nil, field.Invalid(job.workersPath(), e.Max,
			fmt.Sprintf("too many workers for an elastic job in the KubectlExec launch mode, whose Role names every worker pod (%d bytes of names, at most %d): use the SSH launch mode",
				size, maxRoleNameBytes))
	}
	return job.ExecAccess(name, own, "", names...), nil
}
