package reconciler

import (
	"cmp"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/trainfn/trainfn/reconciler/allocation"
	"github.com/trainfn/trainfn/reconciler/cleanup"
	"github.com/trainfn/trainfn/reconciler/discovery"
	"github.com/trainfn/trainfn/reconciler/diserver"
	"github.com/trainfn/trainfn/reconciler/gates"
	"github.com/trainfn/trainfn/reconciler/jobphase"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/progress"
	"github.com/trainfn/trainfn/reconciler/scaling"
	"github.com/trainfn/trainfn/reconciler/sshsecret"
)

// Features are the parts a deployment of the reconciler runs: what it is
// granted follows from them.
type Features struct {
	DIServer bool
	// TokenReview: the DI server reviews bearer tokens.
	TokenReview bool
	Allocator   bool
	// EveryNamespace: the allocator counts every namespace's pods, though
	// the reconciler watches some namespaces only.
	EveryNamespace bool
	// Lease is the leader election Lease's name; "" runs no election.
	Lease string
	// ProgressSecret is the progress server's TLS Secret; "" runs no
	// progress server.
	ProgressSecret string
}

// Grants are the rights the reconciler needs, by where they are granted,
// each the union of its concerns' Rules.
type Grants struct {
	// Watched are needed in every namespace it watches: one ClusterRole
	// when it watches all, a Role in each otherwise.
	Watched []rbacv1.PolicyRule
	// Cluster are needed cluster-wide whatever it watches: what belongs to
	// no namespace.
	Cluster []rbacv1.PolicyRule
	// Release are needed in the reconciler's own namespace.
	Release []rbacv1.PolicyRule
}

// eventRules are the event recorder's: it records what the concerns did,
// on the job's objects.
var eventRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// GrantsOf are the rights a deployment with these features needs, each
// rule in Canonical form.
func GrantsOf(f Features) Grants {
	watched := slices.Concat(observed.Rules, sshsecret.Rules, scaling.Rules, discovery.Rules,
		gates.Rules, cleanup.Rules, jobphase.Rules, eventRules)
	var cluster, release []rbacv1.PolicyRule
	if f.DIServer {
		watched = append(watched, diserver.Rules...)
		if f.TokenReview {
			cluster = append(cluster, diserver.TokenReviewRules...)
		}
	}
	if f.Allocator {
		watched = append(watched, allocation.Rules...)
		watched = append(watched, gates.PinningRules...)
		cluster = append(cluster, allocation.NodeRules...)
		if f.EveryNamespace {
			cluster = append(cluster, allocation.EveryNamespaceRules...)
		}
	}
	if f.ProgressSecret != "" {
		watched = append(watched, progress.Rules...)
		cluster = append(cluster, progress.ClusterRules...)
		release = append(release, progress.SecretRules(f.ProgressSecret)...)
	}
	if f.Lease != "" {
		// Creation cannot be limited by name: the Lease does not exist yet.
		release = append(release,
			rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{f.Lease}, Verbs: []string{"get", "update"}})
	}
	return Grants{Watched: Canonical(watched), Cluster: Canonical(cluster), Release: Canonical(release)}
}

// Canonical is rules as one rule per API group, resource and set of names,
// with its verbs sorted: two lists that grant the same rights are equal
// once canonical, however their rules were split or merged.
func Canonical(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct{ group, resource, names string }
	verbs := map[key][]string{}
	for _, r := range rules {
		names := strings.Join(slices.Sorted(slices.Values(r.ResourceNames)), ",")
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				k := key{g, res, names}
				verbs[k] = append(verbs[k], r.Verbs...)
			}
		}
	}
	out := make([]rbacv1.PolicyRule, 0, len(verbs))
	for k, v := range verbs {
		slices.Sort(v)
		rule := rbacv1.PolicyRule{APIGroups: []string{k.group}, Resources: []string{k.resource}, Verbs: slices.Compact(v)}
		if k.names != "" {
			rule.ResourceNames = strings.Split(k.names, ",")
		}
		out = append(out, rule)
	}
	slices.SortFunc(out, func(a, b rbacv1.PolicyRule) int {
		return cmp.Or(cmp.Compare(a.APIGroups[0], b.APIGroups[0]), cmp.Compare(a.Resources[0], b.Resources[0]),
			cmp.Compare(strings.Join(a.ResourceNames, ","), strings.Join(b.ResourceNames, ",")))
	})
	return out
}
