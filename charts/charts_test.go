// Package charts holds trainfn's Helm charts. Its tests lint and render them
// with the real helm that hack/tools.sh builds, and hold what they render to
// what the reconciler needs: exactly the rights its README lists, and a pod
// that meets the restricted Pod Security Standard.
package charts

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/test/testtool"
)

const reconcilerChart = "trainfn-reconciler"

// The release most tests render: named after the chart, so every object is
// named trainfn-reconciler, as the README promises.
const (
	release          = "trainfn-reconciler"
	releaseNamespace = "trainfn-system"
)

// reconcilerRules are the rights the reconciler needs in the namespaces it
// watches, row for row as the chart's README gives them.
var reconcilerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "patch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list", "watch", "patch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create"}},
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// leaseRules are leader election's, in the release namespace: any Lease may
// be created (it has no name to check before it exists), only the
// release's own read and renewed.
func leaseRules(lease string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{lease}, Verbs: []string{"get", "update"}},
	}
}

func TestLintStrict(t *testing.T) {
	out, err := helm(t, "lint", "--strict", reconcilerChart)
	require.NoError(t, err, "helm lint --strict:\n%s", out)
}

// TestLintRefusesBadValues: a value the chart does not know, or cannot run
// with, fails helm lint, and the message names the value.
func TestLintRefusesBadValues(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		names string
	}{
		{"misspelt top-level key", []string{"--set", "replicaCont=2"}, "'replicaCont' not allowed"},
		{"misspelt nested key", []string{"--set", "leaderElection.enable=false"}, "'enable' not allowed"},
		{"replicas without leader election", []string{"--set", "replicaCount=2,leaderElection.enabled=false"}, "/leaderElection/enabled"},
		{"existing ServiceAccount without a name", []string{"--set", "serviceAccount.create=false"}, "/serviceAccount/name"},
		{"unknown log level", []string{"--set", "logLevel=trace"}, "/logLevel"},
		{"coalesce not a duration", []string{"--set", "coalesce=soon"}, "/coalesce"},
		{"namespace not a DNS label", []string{"--set", "watchNamespaces[0]=Team_A"}, "/watchNamespaces/0"},
		{"namespace listed twice", []string{"--set", "watchNamespaces={a,a}"}, "/watchNamespaces"},
		{"no replicas", []string{"--set", "replicaCount=0"}, "/replicaCount"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := helm(t, append([]string{"lint", "--strict", reconcilerChart}, c.args...)...)
			require.Error(t, err, "helm lint passed %v:\n%s", c.args, out)
			assert.Contains(t, out, c.names)
		})
	}
}

// TestTemplateRefusesBadCombinations: what the schema cannot say, or says
// without the reason, the templates refuse with the reason, even when the
// schema is skipped.
func TestTemplateRefusesBadCombinations(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		says string
	}{
		{"replicas without leader election", []string{"--skip-schema-validation", "--set", "replicaCount=2,leaderElection.enabled=false"},
			"replicaCount is 2 but leaderElection.enabled is false"},
		{"existing ServiceAccount without a name", []string{"--skip-schema-validation", "--set", "serviceAccount.create=false"},
			"serviceAccount.name is required when serviceAccount.create is false"},
		{"metrics and probes on one port", []string{"--set", "metrics.port=8081"},
			"metrics.port and health.port are both 8081"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := helm(t, append([]string{"template", release, reconcilerChart}, c.args...)...)
			require.Error(t, err, "helm template rendered %v:\n%s", c.args, out)
			assert.Contains(t, out, c.says)
		})
	}
}

func TestClusterScopeRBAC(t *testing.T) {
	objs := render(t)

	clusterRoles := ofKind[rbacv1.ClusterRole](t, objs, "ClusterRole")
	require.Len(t, clusterRoles, 1)
	assert.Equal(t, release, clusterRoles[0].Name)
	assert.Equal(t, reconcilerRules, clusterRoles[0].Rules)

	bindings := ofKind[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding")
	require.Len(t, bindings, 1)
	assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: release}, bindings[0].RoleRef)
	assert.Equal(t, []rbacv1.Subject{reconcilerSubject()}, bindings[0].Subjects)

	// The one Role is leader election's, in the release namespace.
	roles := ofKind[rbacv1.Role](t, objs, "Role")
	require.Len(t, roles, 1)
	assert.Equal(t, releaseNamespace, roles[0].Namespace)
	assert.Equal(t, leaseRules(release), roles[0].Rules)
	roleBindings := ofKind[rbacv1.RoleBinding](t, objs, "RoleBinding")
	require.Len(t, roleBindings, 1)
	assert.Equal(t, releaseNamespace, roleBindings[0].Namespace)
	assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roles[0].Name}, roleBindings[0].RoleRef)
	assert.Equal(t, []rbacv1.Subject{reconcilerSubject()}, roleBindings[0].Subjects)

	accounts := ofKind[corev1.ServiceAccount](t, objs, "ServiceAccount")
	require.Len(t, accounts, 1)
	assert.Equal(t, release, accounts[0].Name)
	assert.Equal(t, releaseNamespace, accounts[0].Namespace)

	assert.Empty(t, withPrefix(reconcilerContainer(t, objs).Args, "--namespaces"), "every namespace is watched without the flag")
}

func TestNamespaceScopeRBAC(t *testing.T) {
	objs := render(t, "--set", "watchNamespaces={a,b}")

	assert.Empty(t, ofKind[rbacv1.ClusterRole](t, objs, "ClusterRole"), "a watched namespace list needs no cluster-wide right")
	assert.Empty(t, ofKind[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding"))

	rolesIn := map[string][]rbacv1.PolicyRule{}
	for _, role := range ofKind[rbacv1.Role](t, objs, "Role") {
		rolesIn[role.Namespace+"/"+role.Name] = role.Rules
	}
	assert.Equal(t, map[string][]rbacv1.PolicyRule{
		"a/" + release: reconcilerRules,
		"b/" + release: reconcilerRules,
		releaseNamespace + "/" + release + "-leader-election": leaseRules(release),
	}, rolesIn)

	bindingsIn := map[string]rbacv1.RoleRef{}
	for _, binding := range ofKind[rbacv1.RoleBinding](t, objs, "RoleBinding") {
		bindingsIn[binding.Namespace+"/"+binding.Name] = binding.RoleRef
		assert.Equal(t, []rbacv1.Subject{reconcilerSubject()}, binding.Subjects,
			"RoleBinding %s/%s binds the reconciler's ServiceAccount in the release namespace", binding.Namespace, binding.Name)
	}
	assert.Equal(t, map[string]rbacv1.RoleRef{
		"a/" + release: {APIGroup: rbacv1.GroupName, Kind: "Role", Name: release},
		"b/" + release: {APIGroup: rbacv1.GroupName, Kind: "Role", Name: release},
		releaseNamespace + "/" + release + "-leader-election": {APIGroup: rbacv1.GroupName, Kind: "Role", Name: release + "-leader-election"},
	}, bindingsIn)

	assert.Contains(t, reconcilerContainer(t, objs).Args, "--namespaces=a,b")
}

// TestLeastPrivilege looks at every rule any configuration grants: no
// wildcard, no way to read Secrets in bulk or change one, no way to grant
// itself more.
func TestLeastPrivilege(t *testing.T) {
	for name, args := range map[string][]string{
		"cluster scope":           nil,
		"namespace scope":         {"--set", "watchNamespaces={a,b}"},
		"without leader election": {"--set", "leaderElection.enabled=false"},
		"three replicas":          {"--set", "replicaCount=3"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, args...)
			var rules []rbacv1.PolicyRule
			for _, role := range ofKind[rbacv1.ClusterRole](t, objs, "ClusterRole") {
				assert.Nil(t, role.AggregationRule, "ClusterRole %s aggregates others' rules", role.Name)
				rules = append(rules, role.Rules...)
			}
			for _, role := range ofKind[rbacv1.Role](t, objs, "Role") {
				rules = append(rules, role.Rules...)
			}
			require.NotEmpty(t, rules)
			for _, rule := range rules {
				for _, field := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
					assert.NotContains(t, field, rbacv1.VerbAll, "wildcard in %+v", rule)
				}
				assert.Empty(t, rule.NonResourceURLs, "%+v", rule)
				for _, r := range rule.Resources {
					assert.NotContains(t, r, "/", "subresource %s: the reconciler needs none", r)
				}
				for _, verb := range []string{"escalate", "bind", "impersonate"} {
					assert.NotContains(t, rule.Verbs, verb, "%+v", rule)
				}
				if slices.Contains(rule.Resources, "secrets") {
					assert.Subset(t, []string{"get", "create"}, rule.Verbs, "secrets: get and create only, %+v", rule)
				}
			}
		})
	}
}

// TestREADMETable holds the README's table of rights to what the chart
// grants, so neither changes without the other: every resource and verb
// the table lists is granted, and nothing else.
func TestREADMETable(t *testing.T) {
	documented := map[string]bool{}
	for _, row := range readmeTable(t, "| resource | verbs | why |") {
		resource, _, _ := strings.Cut(row[0], " ")
		for verb := range strings.SplitSeq(row[1], ", ") {
			documented[resource+" "+verb] = true
		}
	}
	objs := render(t)
	granted := map[string]bool{}
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

func TestDeployment(t *testing.T) {
	objs := render(t)
	deployments := ofKind[appsv1.Deployment](t, objs, "Deployment")
	require.Len(t, deployments, 1)
	deployment := deployments[0]
	assert.Equal(t, releaseNamespace, deployment.Namespace)
	assert.Equal(t, ptr.To[int32](1), deployment.Spec.Replicas)
	pod := deployment.Spec.Template.Spec

	assert.Equal(t, release, pod.ServiceAccountName)
	assert.Equal(t, ptr.To(true), pod.AutomountServiceAccountToken, "the reconciler needs the API")
	assert.Equal(t, ptr.To[int64](30), pod.TerminationGracePeriodSeconds)
	assert.Equal(t, &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](65532),
		RunAsGroup:     ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}, pod.SecurityContext)

	require.Len(t, pod.Containers, 1)
	container := pod.Containers[0]
	assert.Equal(t, &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}, container.SecurityContext)

	assert.Equal(t, "ghcr.io/trainfn/trainfn:"+appVersion(t), container.Image, "the tag defaults to the chart's appVersion")
	assert.Empty(t, container.Command, "the image's entrypoint is /trainfn")
	assert.Equal(t, []string{
		"reconcile",
		"--leader-elect=true",
		"--leader-election-id=" + release,
		"--metrics-bind-address=:8080",
		"--health-probe-bind-address=:8081",
		"--coalesce=100ms",
		"--log-level=info",
	}, container.Args)
	assert.Equal(t, []corev1.EnvVar{{
		Name:      "POD_NAMESPACE",
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
	}}, container.Env, "the leader election namespace defaults to the pod's, read from POD_NAMESPACE")
	assert.Equal(t, []corev1.ContainerPort{
		{Name: "metrics", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
		{Name: "health", ContainerPort: 8081, Protocol: corev1.ProtocolTCP},
	}, container.Ports)
	require.NotNil(t, container.LivenessProbe)
	require.NotNil(t, container.ReadinessProbe)
	assert.Equal(t, &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("health")}, container.LivenessProbe.HTTPGet)
	assert.Equal(t, &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("health")}, container.ReadinessProbe.HTTPGet)
	assert.Equal(t, corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}, container.Resources)
}

func TestDeploymentValues(t *testing.T) {
	objs := render(t,
		"--set", "coalesce=1s,logLevel=debug,health.port=9091,metrics.port=9090",
		"--set", "image.tag=v9.9.9,podLabels.team=ml,podLabels.app\\.kubernetes\\.io/name=other",
		"--set", "leaderElection.enabled=false")
	deployment := ofKind[appsv1.Deployment](t, objs, "Deployment")[0]
	container := deployment.Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{
		"reconcile",
		"--leader-elect=false",
		"--metrics-bind-address=:9090",
		"--health-probe-bind-address=:9091",
		"--coalesce=1s",
		"--log-level=debug",
	}, container.Args)
	assert.Equal(t, "ghcr.io/trainfn/trainfn:v9.9.9", container.Image)
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, deployment.Spec.Strategy.Type,
		"without leader election, an update must not run the old and new pod at once")
	labels := deployment.Spec.Template.Labels
	assert.Equal(t, "ml", labels["team"])
	assert.Equal(t, reconcilerChart, labels["app.kubernetes.io/name"], "podLabels cannot change the selector's labels")
	for key, value := range deployment.Spec.Selector.MatchLabels {
		assert.Equal(t, value, labels[key], "the pod template carries the selector's %s", key)
	}
	assert.Empty(t, ofKind[rbacv1.Role](t, objs, "Role"), "no lease rights without leader election")
}

func TestMetricsService(t *testing.T) {
	services := ofKind[corev1.Service](t, render(t, "--set", "metrics.prometheusAnnotations=true"), "Service")
	require.Len(t, services, 1)
	service := services[0]
	assert.Equal(t, release+"-metrics", service.Name)
	assert.Equal(t, corev1.ServiceTypeClusterIP, service.Spec.Type)
	assert.Equal(t, []corev1.ServicePort{{Name: "metrics", Port: 8080, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}}, service.Spec.Ports)
	assert.Equal(t, map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080", "prometheus.io/path": "/metrics"}, service.Annotations)

	assert.Empty(t, ofKind[corev1.Service](t, render(t), "Service")[0].Annotations, "prometheus annotations only when asked for")

	objs := render(t, "--set", "metrics.enabled=false")
	assert.Empty(t, ofKind[corev1.Service](t, objs, "Service"))
	container := reconcilerContainer(t, objs)
	assert.Contains(t, container.Args, "--metrics-bind-address=0", "0 turns the metrics server off")
	assert.Equal(t, []corev1.ContainerPort{{Name: "health", ContainerPort: 8081, Protocol: corev1.ProtocolTCP}}, container.Ports)
}

func TestPodDisruptionBudget(t *testing.T) {
	assert.Empty(t, ofKind[policyv1.PodDisruptionBudget](t, render(t), "PodDisruptionBudget"),
		"a budget for a single replica would block every node drain")

	objs := render(t, "--set", "replicaCount=2")
	budgets := ofKind[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget")
	require.Len(t, budgets, 1)
	assert.Equal(t, 1, budgets[0].Spec.MinAvailable.IntValue())
	deployment := ofKind[appsv1.Deployment](t, objs, "Deployment")[0]
	assert.Equal(t, deployment.Spec.Selector, budgets[0].Spec.Selector)
}

// TestExistingServiceAccount: the roles are bound to the ServiceAccount the
// values name, and the chart makes none.
func TestExistingServiceAccount(t *testing.T) {
	objs := render(t, "--set", "serviceAccount.create=false,serviceAccount.name=reconciler")
	assert.Empty(t, ofKind[corev1.ServiceAccount](t, objs, "ServiceAccount"))
	assert.Equal(t, "reconciler", ofKind[appsv1.Deployment](t, objs, "Deployment")[0].Spec.Template.Spec.ServiceAccountName)
	want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reconciler", Namespace: releaseNamespace}}
	assert.Equal(t, want, ofKind[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding")[0].Subjects)
	assert.Equal(t, want, ofKind[rbacv1.RoleBinding](t, objs, "RoleBinding")[0].Subjects)
}

// TestDeterministic: the same values render the same bytes, so a Git or
// Argo CD diff of the rendered chart shows only what changed.
func TestDeterministic(t *testing.T) {
	args := []string{"template", release, reconcilerChart, "--namespace", releaseNamespace,
		"--set", "watchNamespaces={c,a,b},replicaCount=2",
		"--set-string", "podLabels.x=1,podLabels.y=2,podLabels.z=3,podAnnotations.p=1,podAnnotations.q=2,nodeSelector.n=1,nodeSelector.m=2"}
	first, err := helm(t, args...)
	require.NoError(t, err, first)
	for range 3 {
		again, err := helm(t, args...)
		require.NoError(t, err, again)
		require.Equal(t, first, again)
	}
}

// helm runs the real helm in this folder and returns what it wrote,
// standard output then standard error.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := helmCommand(t, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String() + stderr.String(), err
}

// helmCommand is a helm command with an empty home of its own, so that no
// repository, plugin or setting of the machine's user takes part.
func helmCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(testtool.Find(t, "helm"), args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	return cmd
}

// render is helm template of the reconciler's chart, as the release most
// tests render, with more arguments, decoded.
func render(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	var stderr bytes.Buffer
	cmd := helmCommand(t, append([]string{"template", release, reconcilerChart, "--namespace", releaseNamespace}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "helm template %v: %s", args, stderr.String())
	objs, err := decode(out)
	require.NoError(t, err)
	return objs
}

// decode reads a YAML stream of objects, skipping empty documents.
func decode(stream []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var objs []*unstructured.Unstructured
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if obj != nil {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}

// ofKind are the objects of a kind, typed.
func ofKind[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) []T {
	t.Helper()
	var typed []T
	for _, obj := range objs {
		if obj.GetKind() != kind {
			continue
		}
		var v T
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, &v, true),
			"%s %s has a field its type does not", kind, obj.GetName())
		typed = append(typed, v)
	}
	return typed
}

func reconcilerContainer(t *testing.T, objs []*unstructured.Unstructured) corev1.Container {
	t.Helper()
	deployments := ofKind[appsv1.Deployment](t, objs, "Deployment")
	require.Len(t, deployments, 1)
	containers := deployments[0].Spec.Template.Spec.Containers
	require.Len(t, containers, 1)
	return containers[0]
}

func reconcilerSubject() rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: release, Namespace: releaseNamespace}
}

func withPrefix(args []string, prefix string) []string {
	var found []string
	for _, arg := range args {
		if strings.HasPrefix(arg, prefix) {
			found = append(found, arg)
		}
	}
	return found
}

// appVersion is the chart's appVersion, the image tag by default.
func appVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(reconcilerChart, "Chart.yaml"))
	require.NoError(t, err)
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	require.NoError(t, utilyaml.Unmarshal(data, &chart))
	require.NotEmpty(t, chart.AppVersion)
	return chart.AppVersion
}

// readmeTable is the rows of the table in the chart's README whose header
// row is header, cells trimmed and unquoted.
func readmeTable(t *testing.T, header string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(reconcilerChart, "README.md"))
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
	require.NotEmpty(t, rows, "no table %q in the README", header)
	return rows
}

// The chart's arguments must be flags the reconciler knows: a renamed flag
// would crash-loop every install. The binary parses them under --help,
// which exits before anything runs.
func TestArgsAreTheReconcilersFlags(t *testing.T) {
	trainfn := filepath.Join(t.TempDir(), "trainfn")
	build := exec.Command("go", "build", "-o", trainfn, "./cmd/trainfn")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, values := range [][]string{
		nil,
		{"--set", "watchNamespaces={a,b}", "--set", "metrics.enabled=false", "--set", "leaderElection.enabled=false", "--set", "logLevel=debug"},
	} {
		c := reconcilerContainer(t, render(t, values...))
		args := slices.Concat(c.Command, c.Args)
		require.NotEmpty(t, args)
		require.Equal(t, "reconcile", args[0], "the image's entrypoint is trainfn; its first argument the subcommand")
		out, err := exec.Command(trainfn, append(args, "--help")...).CombinedOutput()
		require.NoError(t, err, "trainfn %s: %s", strings.Join(args, " "), out)
	}
}
