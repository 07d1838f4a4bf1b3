// Package charts holds trainfn's Helm charts. Its tests lint and render them
// with the real helm that hack/tools.sh builds, and hold what they render to
// what the reconciler needs: exactly the rights its README lists, and a pod
// that meets the restricted Pod Security Standard.
package charts

import (
	"bytes"
	"errors"
	"fmt"
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
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/test/testtool"
)

const reconcilerChart = "trainfn-reconciler"

// The release most tests render: named after the chart, so every object is
// named trainfn-reconciler, as the README promises.
const (
	release          = "trainfn-reconciler"
	releaseNamespace = "trainfn-system"
)

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
		{"misspelt DI server key", []string{"--set", "diServer.prot=9000"}, "'prot' not allowed"},
		{"DI server port out of range", []string{"--set", "diServer.port=70000"}, "/diServer/port"},
		{"network policy not a boolean", []string{"--set-string", "diServer.networkPolicy=yes"}, "/diServer/networkPolicy"},
		{"write rate of zero", []string{"--set", "diServer.writeRate=0"}, "/diServer/writeRate"},
		{"write burst of zero", []string{"--set", "diServer.writeBurst=0"}, "/diServer/writeBurst"},
		{"misspelt allocator key", []string{"--set", "allocator.period=1m"}, "'period' not allowed"},
		{"scheduling period not a duration", []string{"--set", "allocator.schedulingPeriod=often"}, "/allocator/schedulingPeriod"},
		{"scheduling period without a unit", []string{"--set-string", "allocator.schedulingPeriod=30"}, "/allocator/schedulingPeriod"},
		{"scheduling period of zero", []string{"--set", "allocator.schedulingPeriod=0s"}, "/allocator/schedulingPeriod"},
		{"scheduling period of zero, spelt long", []string{"--set", "allocator.schedulingPeriod=0m0.0s"}, "/allocator/schedulingPeriod"},
		{"negative scheduling period", []string{"--set", "allocator.schedulingPeriod=-30s"}, "/allocator/schedulingPeriod"},
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
		{"DI server and metrics on one port", []string{"--set", "diJobs.enabled=true,diServer.port=8080"},
			"diServer.port and metrics.port are both 8080"},
		{"DI server and probes on one port", []string{"--set", "diJobs.enabled=true,diServer.port=8081"},
			"diServer.port and health.port are both 8081"},
		{"DI server and probes on one port, metrics off", []string{"--set", "diJobs.enabled=true,diServer.port=8081,metrics.enabled=false"},
			"diServer.port and health.port are both 8081"},
		{"progress server and probes on one port", []string{"--set", "progress.enabled=true,progress.port=8081"},
			"progress.port and health.port are both 8081"},
		{"progress server and DI server on one port", []string{"--set", "diJobs.enabled=true,progress.enabled=true,progress.port=8082"},
			"progress.port and diServer.port are both 8082"},
		{"allocator with a period of zero", []string{"--skip-schema-validation", "--set", "diJobs.enabled=true,allocator.schedulingPeriod=0s"},
			"allocator.schedulingPeriod is 0s with allocator.enabled"},
		{"allocator with a period of zero, unitless", []string{"--skip-schema-validation", "--set", "diJobs.enabled=true", "--set-string", "allocator.schedulingPeriod=0"},
			"allocator.schedulingPeriod is 0 with allocator.enabled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := helm(t, append([]string{"template", release, reconcilerChart}, c.args...)...)
			require.Error(t, err, "helm template rendered %v:\n%s", c.args, out)
			assert.Contains(t, out, c.says)
		})
	}
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

	assert.Equal(t, "ghcr.io/trainfn/trainfn-reconciler:"+appVersion(t), container.Image, "the tag defaults to the chart's appVersion")
	assert.Empty(t, container.Command, "the image's entrypoint is /trainfn-reconciler")
	assert.Equal(t, []string{
		"--leader-elect=true",
		"--leader-election-id=" + release,
		"--metrics-bind-address=:8080",
		"--health-probe-bind-address=:8081",
		"--di-server-bind-address=0",
		"--progress-address=0",
		"--coalesce=100ms",
		"--scheduling-period=0",
		"--log-level=info",
	}, container.Args, "DIJobs' DI server and allocator run only with diJobs.enabled, the progress server only with progress.enabled")
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
		"--set", "leaderElection.enabled=false",
		"--set", "diJobs.enabled=true,diServer.port=9092,allocator.schedulingPeriod=1m30s",
		"--set", "progress.enabled=false")
	deployment := ofKind[appsv1.Deployment](t, objs, "Deployment")[0]
	container := deployment.Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{
		"--leader-elect=false",
		"--metrics-bind-address=:9090",
		"--health-probe-bind-address=:9091",
		"--di-server-bind-address=:9092",
		"--di-server-write-rate=10",
		"--di-server-write-burst=50",
		"--di-server-token-review=false",
		"--progress-address=0",
		"--coalesce=1s",
		"--scheduling-period=1m30s",
		"--log-level=debug",
	}, container.Args)
	assert.Equal(t, "ghcr.io/trainfn/trainfn-reconciler:v9.9.9", container.Image)
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
	service := serviceNamed(t, render(t, "--set", "metrics.prometheusAnnotations=true"), release+"-metrics")
	require.NotNil(t, service, "no Service %s-metrics", release)
	assert.Equal(t, corev1.ServiceTypeClusterIP, service.Spec.Type)
	assert.Equal(t, []corev1.ServicePort{{Name: "metrics", Port: 8080, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}}, service.Spec.Ports)
	assert.Equal(t, map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080", "prometheus.io/path": "/metrics"}, service.Annotations)

	for _, service := range ofKind[corev1.Service](t, render(t), "Service") {
		assert.Empty(t, service.Annotations, "Service %s: prometheus annotations only when asked for, on the metrics Service", service.Name)
	}

	objs := render(t, "--set", "metrics.enabled=false,diJobs.enabled=true,progress.enabled=true,progress.port=9443")
	assert.Nil(t, serviceNamed(t, objs, release+"-metrics"))
	container := reconcilerContainer(t, objs)
	assert.Contains(t, container.Args, "--metrics-bind-address=0", "0 turns the metrics server off")
	assert.Equal(t, []corev1.ContainerPort{
		{Name: "health", ContainerPort: 8081, Protocol: corev1.ProtocolTCP},
		{Name: "di-server", ContainerPort: 8082, Protocol: corev1.ProtocolTCP},
		{Name: "progress", ContainerPort: 9443, Protocol: corev1.ProtocolTCP},
	}, container.Ports)
}

// TestProgressService: the progress server's Service is the release's
// full name, where trainfn points progress jobs by default
// (trainfn-reconciler.trainfn-system.svc:10443), and its certificate is
// for that Service's names. By default, as without progress.enabled, it
// serves none, grants none of its rights and names no Secret in the
// admission policy.
func TestProgressService(t *testing.T) {
	objs := render(t, progress...)
	service := serviceNamed(t, objs, release)
	require.NotNil(t, service, "no Service %s", release)
	assert.Equal(t, corev1.ServiceTypeClusterIP, service.Spec.Type)
	assert.Equal(t, []corev1.ServicePort{{Name: "progress", Port: 10443, TargetPort: intstr.FromString("progress"), Protocol: corev1.ProtocolTCP}}, service.Spec.Ports)
	assert.Equal(t, ofKind[appsv1.Deployment](t, objs, "Deployment")[0].Spec.Selector.MatchLabels, service.Spec.Selector)
	container := reconcilerContainer(t, objs)
	assert.Subset(t, container.Args, []string{
		"--progress-address=:10443",
		"--progress-tls-secret=" + release + "-progress-tls",
		"--progress-tls-secret-namespace=" + releaseNamespace,
		"--progress-dns-names=" + release + "," + release + "." + releaseNamespace + "," + release + "." + releaseNamespace + ".svc," +
			release + "." + releaseNamespace + ".svc.cluster.local",
	})
	assert.Contains(t, container.Ports, corev1.ContainerPort{Name: "progress", ContainerPort: 10443, Protocol: corev1.ProtocolTCP})

	off := render(t)
	assert.Nil(t, serviceNamed(t, off, release))
	assert.Contains(t, reconcilerContainer(t, off).Args, "--progress-address=0")
	policy, _ := reconcilerPolicy(t, off, release)
	for _, v := range policy.Spec.Validations {
		assert.NotContains(t, v.Expression, "progress-tls", "the TLS Secret is writable only with the progress server")
	}
}

// dijobs turns DIJobs' DI server and allocator on.
var dijobs = []string{"--set", "diJobs.enabled=true"}

// progress turns the progress server on.
var progress = []string{"--set", "progress.enabled=true"}

// TestDIServerService: the DI server's Service is where trainfn points
// DIJobs by default, the release installed as the README says; it and the
// container's port follow diServer.
func TestDIServerService(t *testing.T) {
	objs := render(t, dijobs...)
	service := serviceNamed(t, objs, release+"-di-server")
	require.NotNil(t, service, "no Service %s-di-server", release)
	assert.Equal(t, releaseNamespace, service.Namespace)
	assert.Equal(t, corev1.ServiceTypeClusterIP, service.Spec.Type)
	assert.Equal(t, []corev1.ServicePort{{Name: "di-server", Port: 8082, TargetPort: intstr.FromString("di-server"), Protocol: corev1.ProtocolTCP}}, service.Spec.Ports)
	assert.Equal(t, ofKind[appsv1.Deployment](t, objs, "Deployment")[0].Spec.Selector.MatchLabels, service.Spec.Selector,
		"every replica serves the API, the leader or not")
	assert.Equal(t, options.DefaultDIServerURL, fmt.Sprintf("http://%s.%s:%d", service.Name, service.Namespace, service.Spec.Ports[0].Port),
		"trainfn renders DIJobs to call this Service")
	assert.Contains(t, reconcilerContainer(t, objs).Ports, corev1.ContainerPort{Name: "di-server", ContainerPort: 8082, Protocol: corev1.ProtocolTCP})

	objs = render(t, "--set", "diJobs.enabled=true,diServer.port=9000")
	service = serviceNamed(t, objs, release+"-di-server")
	require.NotNil(t, service)
	assert.Equal(t, []corev1.ServicePort{{Name: "di-server", Port: 9000, TargetPort: intstr.FromString("di-server"), Protocol: corev1.ProtocolTCP}}, service.Spec.Ports)
	container := reconcilerContainer(t, objs)
	assert.Contains(t, container.Args, "--di-server-bind-address=:9000")
	assert.Contains(t, container.Ports, corev1.ContainerPort{Name: "di-server", ContainerPort: 9000, Protocol: corev1.ProtocolTCP})

	// The ports of servers turned off are free.
	render(t, "--set", "diJobs.enabled=true,diServer.port=8080,metrics.enabled=false")
	render(t, "--set", "diJobs.enabled=true,diServer.port=8081,diServer.enabled=false")
	render(t, "--set", "diServer.port=8081")

	// A Service name is a DNS label: the full name is shortened to fit.
	long := strings.Repeat("a", 63)
	service = serviceNamed(t, render(t, "--set", "diJobs.enabled=true,fullnameOverride="+long), strings.Repeat("a", 53)+"-di-server")
	require.NotNil(t, service, "the DI server's Service of a 63-character full name")
	assert.LessOrEqual(t, len(service.Name), 63)

	for _, off := range []string{"diJobs.enabled=true,diServer.enabled=false", "diJobs.enabled=false"} {
		objs = render(t, "--set", off)
		assert.Nil(t, serviceNamed(t, objs, release+"-di-server"), off)
	}
	container = reconcilerContainer(t, objs)
	assert.Contains(t, container.Args, "--di-server-bind-address=0", "0 turns the DI server off")
	for _, port := range container.Ports {
		assert.NotEqual(t, "di-server", port.Name)
	}
}

// TestDIServerNetworkPolicy: with the DI server, by default, a
// NetworkPolicy admits to its port only DIJobs' pods, from where the
// reconciler watches, and the peers the values add, and leaves the other
// ports as open as without it.
func TestDIServerNetworkPolicy(t *testing.T) {
	assert.Empty(t, ofKind[networkingv1.NetworkPolicy](t, render(t), "NetworkPolicy"), "none without DIJobs")
	assert.Empty(t, ofKind[networkingv1.NetworkPolicy](t, render(t, "--set", "diJobs.enabled=true,diServer.enabled=false"), "NetworkPolicy"),
		"none without the DI server")
	assert.Empty(t, ofKind[networkingv1.NetworkPolicy](t, render(t, "--set", "diJobs.enabled=true,diServer.networkPolicy=false"), "NetworkPolicy"),
		"none when turned off")

	tcp := ptr.To(corev1.ProtocolTCP)
	port := func(n int32) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: tcp, Port: ptr.To(intstr.FromInt32(n))}
	}
	diJobPods := &metav1.LabelSelector{MatchLabels: map[string]string{handoff.KindLabel: handoff.DIJobKind}}

	objs := render(t, dijobs...)
	policies := ofKind[networkingv1.NetworkPolicy](t, objs, "NetworkPolicy")
	require.Len(t, policies, 1)
	policy := policies[0]
	assert.Equal(t, release+"-di-server", policy.Name)
	assert.Equal(t, releaseNamespace, policy.Namespace)
	assert.Equal(t, *ofKind[appsv1.Deployment](t, objs, "Deployment")[0].Spec.Selector, policy.Spec.PodSelector)
	assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, policy.Spec.PolicyTypes, "it never limits what the reconciler reaches")
	assert.Equal(t, []networkingv1.NetworkPolicyIngressRule{
		{
			From:  []networkingv1.NetworkPolicyPeer{{PodSelector: diJobPods, NamespaceSelector: &metav1.LabelSelector{}}},
			Ports: []networkingv1.NetworkPolicyPort{port(8082)},
		},
		{Ports: []networkingv1.NetworkPolicyPort{port(8080), port(8081)}},
	}, policy.Spec.Ingress)

	objs = render(t, "--set", "diJobs.enabled=true,watchNamespaces={a,b},metrics.enabled=false,diServer.port=9000",
		"--set-json", `diServer.networkPolicyFrom=[{"ipBlock":{"cidr":"10.0.0.0/8"}}]`)
	policies = ofKind[networkingv1.NetworkPolicy](t, objs, "NetworkPolicy")
	require.Len(t, policies, 1)
	watched := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
	}}
	assert.Equal(t, []networkingv1.NetworkPolicyIngressRule{
		{
			From: []networkingv1.NetworkPolicyPeer{
				{PodSelector: diJobPods, NamespaceSelector: watched},
				{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}},
			},
			Ports: []networkingv1.NetworkPolicyPort{port(9000)},
		},
		{Ports: []networkingv1.NetworkPolicyPort{port(8081)}},
	}, policies[0].Spec.Ingress, "the watched namespaces' DIJob pods, and the peers added: the API knows no other namespace's jobs")

	// The policy selects the reconciler's pods: with the progress server,
	// its port admits the pods of trainfn's jobs, or none could report.
	objs = render(t, "--set", "diJobs.enabled=true,progress.enabled=true,watchNamespaces={a,b}")
	policies = ofKind[networkingv1.NetworkPolicy](t, objs, "NetworkPolicy")
	require.Len(t, policies, 1)
	trainfnPods := &metav1.LabelSelector{MatchLabels: map[string]string{handoff.OperatorNameLabel: handoff.Operator}}
	assert.Contains(t, policies[0].Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
		From:  []networkingv1.NetworkPolicyPeer{{PodSelector: trainfnPods, NamespaceSelector: watched}},
		Ports: []networkingv1.NetworkPolicyPort{port(10443)},
	})
	assert.Len(t, policies[0].Spec.Ingress, 3, "the DI server's port, the progress server's, and the open ones")
}

// TestDIServerFlags: the DI server's limits and token review follow the
// values.
func TestDIServerFlags(t *testing.T) {
	args := reconcilerContainer(t, render(t, dijobs...)).Args
	assert.Subset(t, args, []string{"--di-server-write-rate=10", "--di-server-write-burst=50", "--di-server-token-review=false"})
	args = reconcilerContainer(t, render(t, "--set", "diJobs.enabled=true,diServer.writeBurst=5,diServer.tokenReview=true",
		"--set-json", "diServer.writeRate=2.5")).Args
	assert.Subset(t, args, []string{"--di-server-write-rate=2.5", "--di-server-write-burst=5", "--di-server-token-review=true"})
	assert.Empty(t, withPrefix(reconcilerContainer(t, render(t)).Args, "--di-server-write"), "no DI server, no limits")
}

func TestAllocator(t *testing.T) {
	assert.Contains(t, reconcilerContainer(t, render(t, dijobs...)).Args, "--scheduling-period=30s")
	assert.Contains(t, reconcilerContainer(t, render(t, "--set", "diJobs.enabled=true,allocator.schedulingPeriod=2m")).Args, "--scheduling-period=2m")
	assert.Contains(t, clusterRules(t, render(t, dijobs...)), release+"-nodes")
	objs := render(t, "--set", "diJobs.enabled=true,allocator.enabled=false")
	assert.Contains(t, reconcilerContainer(t, objs).Args, "--scheduling-period=0", "0 runs no allocator")
	assert.NotContains(t, clusterRules(t, objs), release+"-nodes")
	// Off, its period may be anything, zero too.
	render(t, "--set", "allocator.enabled=false,allocator.schedulingPeriod=0s")
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
	return helmCommandOf(t, testtool.Find(t, "helm"), args...)
}

// helmCommandOf is helmCommand with another helm binary (Helm 4's).
func helmCommandOf(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
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

// serviceNamed is the Service of that name, nil when there is none.
func serviceNamed(t *testing.T, objs []*unstructured.Unstructured, name string) *corev1.Service {
	t.Helper()
	for _, service := range ofKind[corev1.Service](t, objs, "Service") {
		if service.Name == name {
			return &service
		}
	}
	return nil
}

// clusterRules are the rules of every ClusterRole, by name; none may
// aggregate others'.
func clusterRules(t *testing.T, objs []*unstructured.Unstructured) map[string][]rbacv1.PolicyRule {
	t.Helper()
	rules := map[string][]rbacv1.PolicyRule{}
	for _, role := range ofKind[rbacv1.ClusterRole](t, objs, "ClusterRole") {
		assert.Nil(t, role.AggregationRule, "ClusterRole %s aggregates others' rules", role.Name)
		rules[role.Name] = role.Rules
	}
	return rules
}

// clusterBindings are the roles of every ClusterRoleBinding, by name; each
// binds the reconciler's ServiceAccount and nothing else.
func clusterBindings(t *testing.T, objs []*unstructured.Unstructured) map[string]rbacv1.RoleRef {
	t.Helper()
	refs := map[string]rbacv1.RoleRef{}
	for _, binding := range ofKind[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding") {
		assert.Equal(t, []rbacv1.Subject{reconcilerSubject()}, binding.Subjects, "ClusterRoleBinding %s", binding.Name)
		refs[binding.Name] = binding.RoleRef
	}
	return refs
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

// The chart's arguments must be flags the reconciler knows: a renamed flag
// would crash-loop every install. The binary parses them under --help,
// which exits before anything runs.
func TestArgsAreTheReconcilersFlags(t *testing.T) {
	reconciler := filepath.Join(t.TempDir(), "trainfn-reconciler")
	build := exec.Command("go", "build", "-o", reconciler, "./cmd/trainfn-reconciler")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, values := range [][]string{
		nil,
		{"--set", "watchNamespaces={a,b}", "--set", "metrics.enabled=false", "--set", "leaderElection.enabled=false", "--set", "logLevel=debug"},
		{"--set", "diJobs.enabled=true,diServer.enabled=false,allocator.enabled=false"},
		{"--set", "diJobs.enabled=true,diServer.port=9000,allocator.schedulingPeriod=1m30s"},
	} {
		c := reconcilerContainer(t, render(t, values...))
		args := slices.Concat(c.Command, c.Args)
		require.NotEmpty(t, args)
		for _, arg := range args {
			require.True(t, strings.HasPrefix(arg, "--"), "the image's entrypoint is trainfn-reconciler, which takes flags only, not %q", arg)
		}
		out, err := exec.Command(reconciler, append(args, "--help")...).CombinedOutput()
		require.NoError(t, err, "trainfn-reconciler %s: %s", strings.Join(args, " "), out)
	}
}
