//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/reconciler"
	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// reconcilerChart is the chart of trainfn-reconciler, from this folder.
const reconcilerChart = "../../charts/trainfn-reconciler"

// defaults and withDIJobs are the parts the chart's defaults run, and
// those it runs with diJobs.enabled.
var (
	defaults   = reconciler.Features{}
	withDIJobs = reconciler.Features{DIServer: true, Allocator: true}
)

// reconcilerDenied are what the reconciler must not do where it watches:
// read any Secret or change one, read a pod or ConfigMap by name outside
// its cache, remove the job's ConfigMap or workloads, reach the scale
// subresource, or run a pod (or a command in one) of its own.
var reconcilerDenied = []chartAccess{
	{verb: "get", resource: "secrets", name: "pi-ssh", why: "it never reads a Secret"},
	{verb: "list", resource: "secrets", why: "it would read every Secret"},
	{verb: "watch", resource: "secrets", why: "it would read every Secret"},
	{verb: "update", resource: "secrets", name: "pi-ssh", why: "it would alter a user's Secret"},
	{verb: "patch", resource: "secrets", name: "pi-ssh", why: "it would alter a user's Secret"},
	{verb: "delete", resource: "secrets", name: "pi-ssh", why: "it would remove a user's Secret"},
	{verb: "get", resource: "configmaps", name: "pi-config", why: "it reads ConfigMaps from its cache, never by name"},
	{verb: "delete", resource: "configmaps", name: "pi-config", why: "it patches one key of the job's ConfigMap, never removes it"},
	{verb: "get", resource: "pods", name: "pi-worker-0", why: "it reads pods from its cache, never by name"},
	{verb: "create", resource: "pods", why: "it never makes a pod"},
	{verb: "create", resource: "pods/exec", name: "pi-worker-0", why: "it never runs a command in a pod"},
	{verb: "create", resource: "pods/eviction", name: "pi-worker-0", why: "it never evicts a pod"},
	{verb: "delete", group: "batch", resource: "jobs", name: "pi-worker", why: "it suspends Jobs, never removes them"},
	{verb: "delete", group: "apps", resource: "statefulsets", name: "pi-worker", why: "it scales StatefulSets, never removes them"},
	{verb: "update", group: "apps", resource: "statefulsets", name: "pi-worker", why: "it patches StatefulSets, never replaces them"},
	{verb: "get", group: "apps", resource: "statefulsets/scale", name: "pi-worker", why: "the DI server patches the StatefulSet itself"},
	{verb: "update", group: "apps", resource: "statefulsets/scale", name: "pi-worker", why: "the DI server patches the StatefulSet itself, whose labels the admission policy checks"},
	{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", why: "it grants nothing"},
}

// nodeRights are the allocator's: list and watch every Node into its
// cache, cluster-wide whatever the reconciler watches (Nodes belong to no
// namespace).
var nodeRights = []string{"list", "watch"}

// nodeAccess asks about Nodes: read, when the allocator runs, and never
// changed, removed or reached through the kubelet's API.
func nodeAccess(allocator bool) []chartAccess {
	const where = "the cluster"
	var cases []chartAccess
	for _, verb := range nodeRights {
		why := "the allocator reads every Node"
		if !allocator {
			why = "no allocator runs"
		}
		cases = append(cases, chartAccess{verb: verb, resource: "nodes", where: where, allowed: allocator, why: why})
	}
	return append(cases,
		chartAccess{verb: "get", resource: "nodes", name: "node-0", where: where, why: "the allocator reads Nodes from its cache"},
		chartAccess{verb: "update", resource: "nodes", name: "node-0", where: where, why: "the allocator only reads Nodes"},
		chartAccess{verb: "patch", resource: "nodes", name: "node-0", where: where, why: "the allocator only reads Nodes"},
		chartAccess{verb: "delete", resource: "nodes", name: "node-0", where: where, why: "the allocator only reads Nodes"},
		chartAccess{verb: "create", resource: "nodes", where: where, why: "the allocator only reads Nodes"},
		chartAccess{verb: "patch", resource: "nodes/status", name: "node-0", where: where, why: "the allocator only reads Nodes"},
		chartAccess{verb: "get", resource: "nodes/proxy", name: "node-0", where: where, why: "the kubelet's API is not the allocator's"},
	)
}

// TestChartClusterScope installs the reconciler's chart with its defaults,
// as helm template renders it for a namespace, and asks the API server's
// RBAC authorizer what its ServiceAccount may do: what its code needs, in
// every namespace, and leader election in its own; nothing else, not even
// reading Nodes, which only DIJobs' allocator does.
func TestChartClusterScope(t *testing.T) {
	t.Parallel()
	ns, other := kube.Namespace(t), kube.Namespace(t)
	objs := installChart(t, ns)
	checkRestrictedPod(t, ns, objs)

	reconciler := serviceAccount{namespace: ns, name: chartFullname(ns)}
	where := map[string]string{"the release namespace": ns, "another namespace": other}
	var cases []chartAccess
	for _, label := range []string{"the release namespace", "another namespace"} {
		cases = append(cases, tableRights(defaults, where[label], label)...)
		cases = append(cases, denied(where[label], label)...)
	}
	cases = append(cases, leaseAccess(ns, other, chartFullname(ns))...)
	cases = append(cases, nodeAccess(false)...)
	checkChartAccess(t, reconciler, cases)
}

// TestChartNamespaceScope installs the chart to watch two namespaces, with
// DIJobs on: the rights are there, and neither in the release namespace
// (beyond leader election) nor in any other, the allocator's reads of pods
// included; reading Nodes, which belong to no namespace, is the one
// cluster-wide right.
func TestChartNamespaceScope(t *testing.T) {
	t.Parallel()
	ns, watchedA, watchedB, other := kube.Namespace(t), kube.Namespace(t), kube.Namespace(t), kube.Namespace(t)
	objs := installChart(t, ns, "--set", "watchNamespaces={"+watchedA+","+watchedB+"}", "--set", "diJobs.enabled=true,diServer.networkPolicy=true")
	kinds := map[string]int{}
	for _, obj := range objs {
		kinds[obj.GetKind()]++
		if obj.GetKind() == "ClusterRole" || obj.GetKind() == "ClusterRoleBinding" {
			assert.Equal(t, chartFullname(ns)+"-nodes", obj.GetName(),
				"%s %s: watching namespaces needs no cluster-wide right but reading Nodes", obj.GetKind(), obj.GetName())
		}
	}
	assert.Equal(t, 1, kinds["NetworkPolicy"], "the API server took the DI server's NetworkPolicy")
	checkRestrictedPod(t, ns, objs)

	reconciler := serviceAccount{namespace: ns, name: chartFullname(ns)}
	var cases []chartAccess
	for label, namespace := range map[string]string{"watched namespace a": watchedA, "watched namespace b": watchedB} {
		cases = append(cases, tableRights(withDIJobs, namespace, label)...)
		cases = append(cases, denied(namespace, label)...)
	}
	for label, namespace := range map[string]string{"the release namespace": ns, "another namespace": other} {
		for _, c := range tableRights(withDIJobs, namespace, label) {
			c.allowed, c.why = false, "not a watched namespace"
			cases = append(cases, c)
		}
	}
	cases = append(cases, leaseAccess(ns, other, chartFullname(ns))...)
	cases = append(cases, nodeAccess(true)...)
	checkChartAccess(t, reconciler, cases)
}

// TestChartWithDIJobs installs the chart with DIJobs on, every namespace
// watched: the allocator may read Nodes besides; the DI server needs no
// right of its own.
func TestChartWithDIJobs(t *testing.T) {
	t.Parallel()
	ns, other := kube.Namespace(t), kube.Namespace(t)
	objs := installChart(t, ns, "--set", "diJobs.enabled=true")
	names := map[string]bool{}
	for _, obj := range objs {
		names[obj.GetKind()+" "+obj.GetName()] = true
	}
	assert.True(t, names["Service "+chartFullname(ns)+"-di-server"], "the DI server's Service")
	assert.True(t, names["ClusterRole "+chartFullname(ns)+"-nodes"], "the allocator's ClusterRole")

	reconciler := serviceAccount{namespace: ns, name: chartFullname(ns)}
	var cases []chartAccess
	for label, namespace := range map[string]string{"the release namespace": ns, "another namespace": other} {
		cases = append(cases, tableRights(withDIJobs, namespace, label)...)
		cases = append(cases, denied(namespace, label)...)
	}
	cases = append(cases, nodeAccess(true)...)
	checkChartAccess(t, reconciler, cases)
}

// chartAccess is one question to the authorizer about the reconciler.
type chartAccess struct {
	verb, group, resource string // resource[/subresource]
	name                  string // empty: every object, as list and create ask
	called                string // what name is, when it is random
	namespace, where      string // where describes namespace, whose name is random
	allowed               bool
	why                   string
}

func (c chartAccess) String() string {
	name := c.name
	switch {
	case c.called != "":
		name = c.called
	case name == "":
		name = "any"
	}
	resource := c.resource
	if c.group != "" {
		resource += "." + c.group
	}
	return fmt.Sprintf("%s %s %s in %s", c.verb, strings.ReplaceAll(resource, "/", " "), name, c.where)
}

// tableRights are the rights the reconciler's code declares it needs in
// the namespaces it watches when it runs these parts (package reconciler's
// GrantsOf), asked for in one namespace. charts/rbac_test.go holds the
// chart to them; here the API server's authorizer is asked about them.
func tableRights(f reconciler.Features, namespace, where string) []chartAccess {
	var cases []chartAccess
	for _, right := range reconciler.GrantsOf(f).Watched {
		for _, verb := range right.Verbs {
			cases = append(cases, chartAccess{
				verb: verb, group: right.APIGroups[0], resource: right.Resources[0],
				namespace: namespace, where: where, allowed: true, why: "the reconciler's code needs it",
			})
		}
	}
	return cases
}

// denied are reconcilerDenied, asked for in one namespace.
func denied(namespace, where string) []chartAccess {
	var cases []chartAccess
	for _, c := range reconcilerDenied {
		c.namespace, c.where = namespace, where
		cases = append(cases, c)
	}
	return cases
}

// leaseAccess: the release's own Lease, in the release namespace, and no
// other Lease anywhere.
func leaseAccess(ns, other, lease string) []chartAccess {
	const group, leases = "coordination.k8s.io", "leases"
	here, there := "the release namespace", "another namespace"
	return []chartAccess{
		{verb: "create", group: group, resource: leases, namespace: ns, where: here, allowed: true, why: "leader election creates its Lease"},
		{verb: "get", group: group, resource: leases, name: lease, called: "its own", namespace: ns, where: here, allowed: true, why: "leader election reads its Lease"},
		{verb: "update", group: group, resource: leases, name: lease, called: "its own", namespace: ns, where: here, allowed: true, why: "leader election renews its Lease"},
		{verb: "get", group: group, resource: leases, name: "kube-scheduler", namespace: ns, where: here, why: "another component's Lease"},
		{verb: "update", group: group, resource: leases, name: "kube-scheduler", namespace: ns, where: here, why: "another component's Lease"},
		{verb: "list", group: group, resource: leases, namespace: ns, where: here, why: "every Lease"},
		{verb: "delete", group: group, resource: leases, name: lease, called: "its own", namespace: ns, where: here, why: "leader election never removes its Lease"},
		{verb: "create", group: group, resource: leases, namespace: other, where: there, why: "leader election is in the release namespace only"},
		{verb: "update", group: group, resource: leases, name: lease, called: "its own", namespace: other, where: there, why: "leader election is in the release namespace only"},
	}
}

// installChart renders the chart with helm template as the release named
// after ns, into ns, and applies every object where the chart put it. The
// cluster-wide objects are removed when the test ends, as the namespaces
// are.
func installChart(t *testing.T, ns string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	helm := testtool.Find(t, "helm")
	cmd := exec.Command(helm, append([]string{"template", ns, reconcilerChart, "--namespace", ns}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "helm template: %s", stderr.String())
	path := filepath.Join(t.TempDir(), "chart.yaml")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	objs, err := cluster.ReadObjects(path)
	require.NoError(t, err)
	require.NotEmpty(t, objs)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, applyWhereRendered(ctx, t, objs), "the API server refused the chart rendered for %s", ns)
	return objs
}

// applyWhereRendered applies objects server-side, strictly, each in the
// namespace the chart gave it: the release namespace, or a watched one.
func applyWhereRendered(ctx context.Context, t *testing.T, objs []*unstructured.Unstructured) error {
	clients, err := applyClients()
	if err != nil {
		return err
	}
	var errs []error
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := clients.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err))
			continue
		}
		resource := clients.dynamic.Resource(mapping.Resource)
		var client dynamic.ResourceInterface = resource
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			if obj.GetNamespace() == "" {
				errs = append(errs, fmt.Errorf("%s %s: the chart gave it no namespace", gvk.Kind, obj.GetName()))
				continue
			}
			client = resource.Namespace(obj.GetNamespace())
		} else {
			name := obj.GetName()
			t.Cleanup(func() {
				_ = resource.Delete(context.Background(), name, metav1.DeleteOptions{})
			})
		}
		if err := applyOne(ctx, client, obj); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// chartFullname is the name the chart gives every object of a release.
func chartFullname(release string) string {
	return release + "-trainfn-reconciler"
}

// checkRestrictedPod has the API server admit, in a dry run, the pod the
// chart's Deployment makes, in its namespace with the restricted Pod
// Security Standard enforced: the README promises the pod meets it. A pod
// that does not meet it must be refused first, which shows enforcement is
// on; no controller here turns the Deployment into pods.
func checkRestrictedPod(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	var deployment appsv1.Deployment
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" {
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &deployment))
		}
	}
	require.NotEmpty(t, deployment.Name, "the chart has no Deployment")

	patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`)
	_, err := kube.Client.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)

	pod := func(template corev1.PodTemplateSpec) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: deployment.Name + "-", Namespace: ns, Labels: template.Labels},
			Spec:       template.Spec,
		}
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	privileged := *deployment.Spec.Template.DeepCopy()
	privileged.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
	err = waitUntil("the restricted Pod Security Standard to be enforced in "+ns, func(ctx context.Context) error {
		_, err := kube.Client.CoreV1().Pods(ns).Create(ctx, pod(privileged), dryRun)
		switch {
		case err == nil:
			return errors.New("a pod that may escalate its privileges was admitted")
		case !strings.Contains(err.Error(), "violates PodSecurity"):
			return fmt.Errorf("a pod that may escalate its privileges was refused, but not by Pod Security admission: %w", err)
		}
		return nil
	})
	require.NoError(t, err)

	// The ServiceAccount admission plugin reads the chart's ServiceAccount
	// from its cache, a moment after it is written.
	err = waitUntil("the chart's pod to be admitted", func(ctx context.Context) error {
		_, err := kube.Client.CoreV1().Pods(ns).Create(ctx, pod(deployment.Spec.Template), dryRun)
		return err
	})
	require.NoError(t, err, "the API server refused the chart's pod under the restricted Pod Security Standard")
}

// checkChartAccess asks the RBAC authorizer each question about the
// reconciler's ServiceAccount, once every right it should have has taken
// effect (the authorizer learns of roles through informers).
func checkChartAccess(t *testing.T, who serviceAccount, cases []chartAccess) {
	t.Helper()
	err := waitUntil("the chart's roles to take effect", func(ctx context.Context) error {
		for _, c := range cases {
			if !c.allowed {
				continue
			}
			review, err := chartAccessReview(ctx, who, c)
			if err != nil {
				return err
			}
			if !review.Status.Allowed {
				return fmt.Errorf("%s: %s", c, explain(review))
			}
		}
		return nil
	})
	require.NoError(t, err)

	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			review, err := chartAccessReview(context.Background(), who, c)
			require.NoError(t, err)
			require.Empty(t, review.Status.EvaluationError, "the authorizer could not evaluate the review")
			want := "denied"
			if c.allowed {
				want = "allowed"
			}
			assert.Equal(t, c.allowed, review.Status.Allowed, "may %s %s? want %s (%s); the API server: %s",
				who, c, want, c.why, explain(review))
		})
	}
}

// chartAccessReview asks the API server whether a ServiceAccount may do
// what c says.
func chartAccessReview(ctx context.Context, who serviceAccount, c chartAccess) (*authorizationv1.SubjectAccessReview, error) {
	resource, subresource, _ := strings.Cut(c.resource, "/")
	return kube.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   who.String(),
			Groups: who.groups(),
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace:   c.namespace,
				Verb:        c.verb,
				Group:       c.group,
				Resource:    resource,
				Subresource: subresource,
				Name:        c.name,
			},
		},
	}, metav1.CreateOptions{})
}
