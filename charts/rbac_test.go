package charts

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainfn/trainfn/reconciler"
)

// grants are the rights a rendered chart gives the reconciler, by where:
// cluster-wide (ClusterRoles bound by ClusterRoleBindings) and in each
// namespace (Roles bound by RoleBindings), each Canonical.
type grants struct {
	cluster     map[string][]rbacv1.PolicyRule // by ClusterRole
	namespaces  map[string][]rbacv1.PolicyRule // by namespace, every Role of it
	clusterWide []rbacv1.PolicyRule            // every ClusterRole's
}

// grantsOf reads the rights a rendered chart gives, holding every binding
// to bind the reconciler's ServiceAccount alone, to a role of the chart
// and of its own name.
func grantsOf(t *testing.T, objs []*unstructured.Unstructured) grants {
	t.Helper()
	g := grants{cluster: map[string][]rbacv1.PolicyRule{}, namespaces: map[string][]rbacv1.PolicyRule{}}
	for name, rules := range clusterRules(t, objs) {
		g.cluster[name] = reconciler.Canonical(rules)
		g.clusterWide = append(g.clusterWide, rules...)
	}
	g.clusterWide = reconciler.Canonical(g.clusterWide)
	for name, ref := range clusterBindings(t, objs) {
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, ref, "ClusterRoleBinding %s", name)
		assert.Contains(t, g.cluster, name, "ClusterRoleBinding %s binds a ClusterRole the chart renders", name)
	}
	assert.Len(t, clusterBindings(t, objs), len(g.cluster), "a ClusterRoleBinding to each ClusterRole, and no other")
	roles := map[string]bool{}
	for _, role := range ofKind[rbacv1.Role](t, objs, "Role") {
		g.namespaces[role.Namespace] = reconciler.Canonical(append(g.namespaces[role.Namespace], role.Rules...))
		roles[role.Namespace+"/"+role.Name] = true
	}
	for _, binding := range ofKind[rbacv1.RoleBinding](t, objs, "RoleBinding") {
		assert.Equal(t, []rbacv1.Subject{reconcilerSubject()}, binding.Subjects, "RoleBinding %s/%s", binding.Namespace, binding.Name)
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: binding.Name}, binding.RoleRef)
		assert.True(t, roles[binding.Namespace+"/"+binding.Name], "RoleBinding %s/%s binds a Role of its namespace", binding.Namespace, binding.Name)
	}
	return g
}

// progressSecret is the progress server's TLS Secret, of the release.
const progressSecret = release + "-progress-tls"

// TestRBACIsWhatTheCodeNeeds holds what the chart grants to what the
// reconciler's code declares it needs (the Rules of each of its packages,
// put together by reconciler.GrantsOf), in every scope and with every
// optional part on or off: neither a right the code does not need, nor
// one it needs and the chart forgot. test/reconcile runs the reconciler
// under these grants on a real API server.
func TestRBACIsWhatTheCodeNeeds(t *testing.T) {
	for _, c := range []struct {
		name     string
		args     []string
		features reconciler.Features
	}{
		{"defaults", nil, reconciler.Features{Lease: release}},
		{"DIJobs", []string{"--set", "diJobs.enabled=true"},
			reconciler.Features{DIServer: true, Allocator: true, Lease: release}},
		{"DIJobs, tokens reviewed", []string{"--set", "diJobs.enabled=true,diServer.tokenReview=true"},
			reconciler.Features{DIServer: true, TokenReview: true, Allocator: true, Lease: release}},
		{"DIJobs without the allocator", []string{"--set", "diJobs.enabled=true,allocator.enabled=false"},
			reconciler.Features{DIServer: true, Lease: release}},
		{"DIJobs without the DI server", []string{"--set", "diJobs.enabled=true,diServer.enabled=false"},
			reconciler.Features{Allocator: true, Lease: release}},
		{"DIJobs, every namespace's pods counted", []string{"--set", "diJobs.enabled=true,allocator.countEveryNamespace=true"},
			reconciler.Features{DIServer: true, Allocator: true, EveryNamespace: true, Lease: release}},
		{"the DI server and allocator asked for without DIJobs", []string{"--set", "diServer.enabled=true,allocator.enabled=true"},
			reconciler.Features{Lease: release}},
		{"without leader election", []string{"--set", "leaderElection.enabled=false"}, reconciler.Features{}},
		{"the progress server", []string{"--set", "progress.enabled=true"}, reconciler.Features{Lease: release, ProgressSecret: progressSecret}},
		{"the progress server without leader election", []string{"--set", "progress.enabled=true,leaderElection.enabled=false"},
			reconciler.Features{ProgressSecret: progressSecret}},
		{"DIJobs, tokens reviewed, the progress server", []string{"--set", "diJobs.enabled=true,diServer.tokenReview=true,progress.enabled=true"},
			reconciler.Features{DIServer: true, TokenReview: true, Allocator: true, Lease: release, ProgressSecret: progressSecret}},
	} {
		for _, watched := range [][]string{nil, {"a", "b"}} {
			name := c.name + ", every namespace"
			args := c.args
			if watched != nil {
				name = c.name + ", namespaces a and b"
				args = append(slices.Clone(args), "--set", "watchNamespaces={a,b}")
			}
			t.Run(name, func(t *testing.T) {
				want := reconciler.GrantsOf(c.features)
				got := grantsOf(t, render(t, args...))
				wantNamespaces := map[string][]rbacv1.PolicyRule{}
				wantCluster := want.Cluster
				if watched == nil {
					wantCluster = reconciler.Canonical(slices.Concat(want.Watched, want.Cluster))
				}
				for _, ns := range watched {
					wantNamespaces[ns] = want.Watched
				}
				if len(want.Release) > 0 {
					wantNamespaces[releaseNamespace] = want.Release
				}
				assert.Equal(t, wantCluster, got.clusterWide, "cluster-wide rights")
				assert.Equal(t, wantNamespaces, got.namespaces, "rights by namespace")
			})
		}
	}
}

// TestLeastPrivilege looks at every rule any configuration grants: no
// wildcard, no subresource, no way to read a Secret or change one, no way
// to grant itself more.
func TestLeastPrivilege(t *testing.T) {
	for name, args := range map[string][]string{
		"cluster scope":           nil,
		"namespace scope":         {"--set", "watchNamespaces={a,b}"},
		"DIJobs":                  {"--set", "diJobs.enabled=true"},
		"DIJobs, namespace scope": {"--set", "diJobs.enabled=true,watchNamespaces={a,b}"},
		"tokens reviewed":         {"--set", "diJobs.enabled=true,diServer.tokenReview=true"},
		"without leader election": {"--set", "leaderElection.enabled=false"},
		"three replicas":          {"--set", "replicaCount=3"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, args...)
			var rules []rbacv1.PolicyRule
			for _, role := range ofKind[rbacv1.ClusterRole](t, objs, "ClusterRole") {
				rules = append(rules, role.Rules...)
			}
			for _, role := range ofKind[rbacv1.Role](t, objs, "Role") {
				rules = append(rules, role.Rules...)
			}
			require.NotEmpty(t, rules)
			for _, rule := range reconciler.Canonical(rules) {
				for _, field := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
					assert.NotContains(t, field, rbacv1.VerbAll, "wildcard in %+v", rule)
				}
				assert.Empty(t, rule.NonResourceURLs, "%+v", rule)
				assert.NotContains(t, rule.Resources[0], "/", "a subresource: %+v", rule)
				for _, verb := range []string{"escalate", "bind", "impersonate", "deletecollection"} {
					assert.NotContains(t, rule.Verbs, verb, "%+v", rule)
				}
				switch rule.Resources[0] {
				case "secrets":
					if len(rule.ResourceNames) == 0 {
						assert.Equal(t, []string{"create"}, rule.Verbs, "secrets: create only, never read")
					} else {
						assert.Equal(t, []string{progressSecret}, rule.ResourceNames, "secrets: read only the progress server's own")
						assert.Equal(t, []string{"get", "update"}, rule.Verbs)
					}
				case "nodes", "configmaps":
					assert.NotSubset(t, rule.Verbs, []string{"create"}, "%+v", rule)
					assert.NotContains(t, rule.Verbs, "update", "%+v", rule)
				}
				if rule.Resources[0] == "nodes" {
					assert.Equal(t, []string{"list", "watch"}, rule.Verbs, "nodes: read from the cache only")
				}
			}
		})
	}
}

// TestRightsTable holds the table of rights in docs/reconciler.md to what
// the chart grants with DIJobs on and tokens reviewed, the most it grants:
// every resource and verb the table lists is granted, and nothing else.
func TestRightsTable(t *testing.T) {
	documented := map[string]bool{}
	for _, row := range docsTable(t, filepath.Join("..", "docs", "reconciler.md"), "| resource | verbs | code | why |") {
		resource, _, _ := strings.Cut(row[0], " ")
		for verb := range strings.SplitSeq(row[1], ", ") {
			documented[resource+" "+verb] = true
		}
	}
	granted := map[string]bool{}
	objs := render(t, "--set", "diJobs.enabled=true,diServer.tokenReview=true,progress.enabled=true")
	var rules []rbacv1.PolicyRule
	for _, role := range ofKind[rbacv1.ClusterRole](t, objs, "ClusterRole") {
		rules = append(rules, role.Rules...)
	}
	for _, role := range ofKind[rbacv1.Role](t, objs, "Role") {
		rules = append(rules, role.Rules...)
	}
	for _, rule := range rules {
		for _, resource := range rule.Resources {
			for _, verb := range rule.Verbs {
				granted[resource+" "+verb] = true
			}
		}
	}
	assert.Equal(t, documented, granted)
}

// docsTable reads the rows of the Markdown table under header in a file,
// each cell trimmed of spaces and code quotes.
func docsTable(t *testing.T, path, header string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows [][]string
	in := false
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := lines.Text()
		switch {
		case line == header:
			in = true
		case !in || strings.HasPrefix(line, "| ---"):
		case strings.HasPrefix(line, "|"):
			var cells []string
			for cell := range strings.SplitSeq(strings.Trim(line, "|"), "|") {
				cells = append(cells, strings.Trim(strings.TrimSpace(cell), "`"))
			}
			rows = append(rows, cells)
		default:
			in = false
		}
	}
	require.NoError(t, lines.Err())
	require.NotEmpty(t, rows, "no table %q in %s", header, path)
	return rows
}
