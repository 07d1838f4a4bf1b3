package workload

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/ynode"
)

// ServiceAccountWithRole is a ServiceAccount of the given name, and a Role
// of the given rules bound to it under the same name. The RoleBinding's
// subject has no namespace: RBAC reads it as the RoleBinding's own, so the
// objects stay portable across namespaces.
func (o Owner) ServiceAccountWithRole(name string, own map[string]string, rules ...any) []*yaml.RNode {
	return []*yaml.RNode{
		o.Object("v1", "ServiceAccount", name, own),
		o.Object("rbac.authorization.k8s.io/v1", "Role", name, own, "rules", ynode.Seq(rules...)),
		o.Object("rbac.authorization.k8s.io/v1", "RoleBinding", name, own,
			"roleRef", ynode.Map("apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", name),
			"subjects", ynode.Seq(ynode.Map("kind", "ServiceAccount", "name", name))),
	}
}

// ExecAccess is the ServiceAccount, Role and RoleBinding of a launcher
// that execs into its workers (ExecRules). When the render knows the
// workers' pods' names, the Role grants them and nothing else; when it
// does not (an Indexed Job's, named by the Job controller), the Role
// reaches the namespace's pods, and carries the expression every worker's
// pod name matches (handoff.ExecPods, handoff.IndexedPodNames) for the
// admission policy that holds the launcher to those pods.
func (o Owner) ExecAccess(name string, own map[string]string, pods string, names ...string) []*yaml.RNode {
	objs := o.ServiceAccountWithRole(name, own, ExecRules(names...)...)
	if len(names) == 0 {
		Annotate(objs[1], map[string]string{handoff.ExecPods: pods})
	}
	return objs
}

// ExecRules let kubectl exec into the namespace's pods: kubectl looks the
// pod up first (get), finds one by its labels (list), and opens the
// session, which is both get (WebSocket upgrades, kubectl 1.30 and later)
// and create (SPDY, and the create check Kubernetes 1.35 adds to
// WebSocket upgrades). names, when given, limit both to those pods, which
// then need no list.
func ExecRules(names ...string) []any {
	if len(names) == 0 {
		return []any{
			ynode.Map("apiGroups", []string{""}, "resources", []string{"pods"}, "verbs", []string{"get", "list"}),
			ynode.Map("apiGroups", []string{""}, "resources", []string{"pods/exec"}, "verbs", []string{"create", "get"}),
		}
	}
	return []any{
		ynode.Map("apiGroups", []string{""}, "resources", []string{"pods"}, "resourceNames", names, "verbs", []string{"get"}),
		ynode.Map("apiGroups", []string{""}, "resources", []string{"pods/exec"}, "resourceNames", names, "verbs", []string{"create", "get"}),
	}
}

// AdmitOnly is a NetworkPolicy under which the selected pods admit the
// peers' pods alone, on every port. The selectors name no namespace, so
// the policy's own applies, and the output stays portable.
func (o Owner) AdmitOnly(name string, own, selected, peers map[string]string) *yaml.RNode {
	return o.Object("networking.k8s.io/v1", "NetworkPolicy", name, own,
		"spec", ynode.Map(
			"podSelector", ynode.Map("matchLabels", ynode.StringMap(selected)),
			"policyTypes", []string{"Ingress"},
			"ingress", ynode.Seq(ynode.Map(
				"from", ynode.Seq(ynode.Map("podSelector", ynode.Map("matchLabels", ynode.StringMap(peers))))))))
}
