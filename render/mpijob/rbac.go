package mpijob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/ynode"
)

// maxRoleNameBytes bounds the worker names a Role lists, twice over, well
// inside what the API server stores in one object.
const maxRoleNameBytes = 256 << 10

// launcherRBAC lets the launcher of a KubectlExec job exec into its own
// workers and nothing else: it may read those pods (kubectl exec looks the
// pod up first) and open exec sessions in them, named one by one. Exec is
// both get (WebSocket upgrades, kubectl 1.30 and later) and create (SPDY,
// and the create check Kubernetes 1.35 adds to WebSocket upgrades).
//
// The RoleBinding's subject has no namespace: RBAC reads it as the
// RoleBinding's own, so the objects stay portable across namespaces.
//
// An elastic job's Role names every worker it may scale to: its
// StatefulSet names pods as their hosts. Other workers (under Kueue, an
// elastic job's too) are an Indexed Job, whose pods' names the Job
// controller makes up, so that a lost worker is made again and the
// workers stop when the job ends: its Role cannot name them, and lets the
// launcher find (list) and exec into the namespace's pods.
func launcherRBAC(job *Job) ([]*yaml.RNode, *field.Error) {
	name := handoff.LauncherName(job.Name)
	own := handoff.RoleLabels(job.Name, handoff.RoleLauncher)
	e := job.elastic()
	if !job.workersInStatefulSet() {
		return launcherAccess(job, name, own,
			ynode.Map("apiGroups", []string{""}, "resources", []string{"pods"}, "verbs", []string{"get", "list"}),
			ynode.Map("apiGroups", []string{""}, "resources", []string{"pods/exec"}, "verbs", []string{"create", "get"})), nil
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
	return launcherAccess(job, name, own,
		ynode.Map("apiGroups", []string{""}, "resources", []string{"pods"}, "resourceNames", names, "verbs", []string{"get"}),
		ynode.Map("apiGroups", []string{""}, "resources", []string{"pods/exec"}, "resourceNames", names, "verbs", []string{"create", "get"})), nil
}

// launcherAccess is the launcher's ServiceAccount, and a Role of the given
// rules bound to it.
func launcherAccess(job *Job, name string, own map[string]string, rules ...any) []*yaml.RNode {
	return []*yaml.RNode{
		job.Object("v1", "ServiceAccount", name, own),
		job.Object("rbac.authorization.k8s.io/v1", "Role", name, own, "rules", ynode.Seq(rules...)),
		job.Object("rbac.authorization.k8s.io/v1", "RoleBinding", name, own,
			"roleRef", ynode.Map("apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", name),
			"subjects", ynode.Seq(ynode.Map("kind", "ServiceAccount", "name", name))),
	}
}
