//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// TestKubectlExecLauncherRBAC applies what an MPIJob in the KubectlExec
// launch mode renders to, and asks the API server's own RBAC authorizer
// what its launcher's ServiceAccount may do: find its job's workers and
// exec into them, the pods of its own namespace, whose names the Job
// controller makes up; nothing else, in no other namespace. The Role says
// what its workers' pods' names start with, for the admission policy that
// holds the launcher to them, which RBAC cannot. The RoleBinding's subject
// names no namespace, which RBAC reads as the RoleBinding's own, so the
// rights follow the output into whichever namespace it is applied to.
func TestKubectlExecLauncherRBAC(t *testing.T) {
	t.Parallel()
	objs, ns, other := applyGolden(t, "mpijob-kubectl-exec")
	role := objectNamed(t, objs, "Role", "noshd-launcher")
	assert.Equal(t, handoff.IndexedPodNames(2, "noshd-worker"), role.GetAnnotations()[handoff.ExecPods],
		"what every worker's pod name is, for the admission policy")

	launcher := serviceAccount{namespace: ns, name: "noshd-launcher"}
	// The workers are an Indexed Job, whose pods' names the Job
	// controller makes up: the launcher finds them by label and execs into
	// them, in its own namespace only.
	var cases []access
	for _, worker := range []string{"noshd-worker-0-x7k2p", "noshd-worker-1-9qzrt"} {
		cases = append(cases,
			access{launcher, "get", "pods", worker, ns, true, "kubectl exec reads the worker pod first"},
			access{launcher, "create", "pods/exec", worker, ns, true, "kubectl exec opens the stream with a POST"},
			access{launcher, "get", "pods/exec", worker, ns, true, "older kubectl opens the stream with a GET"},
		)
	}
	cases = append(cases, access{launcher, "list", "pods", "", ns, true, "kubexec.sh finds a worker's pod by its Job's labels"})
	for _, verb := range []string{"get", "create"} {
		cases = append(cases, access{launcher, verb, "pods/exec", "noshd-worker-0-x7k2p", other, false, "a worker's name in another namespace"})
	}
	cases = append(cases,
		access{launcher, "list", "pods", "", other, false, "another namespace's pods"},
		access{launcher, "watch", "pods", "", ns, false, "the namespace's pods, watched"},
		access{launcher, "delete", "pods", "noshd-worker-0-x7k2p", ns, false, "a worker it may only exec into"},
		access{launcher, "get", "secrets", "noshd-ssh", ns, false, "a Secret of the job's name"},
		access{launcher, "create", "pods", "", ns, false, "new pods"},
		access{launcher, "create", "pods/attach", "noshd-worker-0-x7k2p", ns, false, "attaching to a worker"},
		access{launcher, "create", "pods/portforward", "noshd-worker-0-x7k2p", ns, false, "forwarding a worker's ports"},
	)
	reviewAccess(t, launcher, ns, withNamesakes(cases, other))
}

// TestKubectlExecElasticLauncherRBAC: an elastic job's workers are a
// StatefulSet, whose pods are named as their hosts, and its launcher's Role
// names every one it may scale to: RBAC alone refuses it any other pod, a
// name one past the elastic maximum or one that only starts like a
// worker's, and lets it list none. Its Role carries no prefix for the
// admission policy, which it does not need.
func TestKubectlExecElasticLauncherRBAC(t *testing.T) {
	t.Parallel()
	objs, ns, other := applyGolden(t, "mpijob-kubectl-exec-elastic")
	role := objectNamed(t, objs, "Role", "grow-launcher")
	assert.NotContains(t, role.GetAnnotations(), handoff.ExecPods, "RBAC alone holds the launcher to its workers")

	launcher := serviceAccount{namespace: ns, name: "grow-launcher"}
	var cases []access
	// trainfn.dev/elastic-workers: "1:4": the workers grow-worker-0 to 3.
	for _, worker := range []string{"grow-worker-0", "grow-worker-1", "grow-worker-2", "grow-worker-3"} {
		cases = append(cases,
			access{launcher, "get", "pods", worker, ns, true, "kubectl exec reads the worker pod first"},
			access{launcher, "create", "pods/exec", worker, ns, true, "kubectl exec opens the stream with a POST"},
			access{launcher, "get", "pods/exec", worker, ns, true, "older kubectl opens the stream with a GET"},
		)
	}
	for _, pod := range []struct{ name, why string }{
		{"grow-worker-4", "one past the elastic maximum"},
		{"grow-worker-0-x7k2p", "a name that starts as a worker's"},
		{"grow-launcher", "the launcher itself"},
		{"noshd-worker-0", "another job's worker"},
	} {
		for _, verb := range []string{"create", "get"} {
			cases = append(cases, access{launcher, verb, "pods/exec", pod.name, ns, false, "a pod the Role does not name: " + pod.why})
		}
		cases = append(cases, access{launcher, "get", "pods", pod.name, ns, false, "a pod the Role does not name: " + pod.why})
	}
	cases = append(cases,
		access{launcher, "list", "pods", "", ns, false, "kubexec.sh reaches a worker's pod by its host's name, and lists none"},
		access{launcher, "watch", "pods", "", ns, false, "the namespace's pods, watched"},
		access{launcher, "create", "pods/exec", "grow-worker-0", other, false, "a worker's name in another namespace"},
		access{launcher, "delete", "pods", "grow-worker-0", ns, false, "a worker it may only exec into"},
		access{launcher, "create", "pods/attach", "grow-worker-0", ns, false, "attaching to a worker"},
	)
	reviewAccess(t, launcher, ns, withNamesakes(cases, other))
}

// access is a question to the authorizer, and the answer it must give.
type access struct {
	who         serviceAccount
	verb        string
	resource    string // resource[/subresource]
	name        string // empty: every object, as list and create ask
	namespace   string
	allowed     bool
	description string
}

// applyGolden applies a golden case's expected output server-side into a
// fresh namespace, and returns its objects, that namespace and another.
func applyGolden(t *testing.T, name string) (objs []*unstructured.Unstructured, ns, other string) {
	t.Helper()
	path := filepath.Join(testtool.GoldenDir(t, name), "expected.yaml")
	objs, err := cluster.ReadObjects(path)
	require.NoError(t, err)
	ns, other = kube.Namespace(t), kube.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, serverSideApply(ctx, ns, objs), "the API server refused %s", path)
	return objs, ns, other
}

func objectNamed(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s", kind, name)
	return nil
}

// withNamesakes adds, for what the launcher is allowed, the same asked by
// its namesake in another namespace, in the job's namespace and its own:
// denied, since the subject binds the ServiceAccount of the RoleBinding's
// namespace only. (A SubjectAccessReview asks about the user, whether or
// not it exists.)
func withNamesakes(cases []access, other string) []access {
	for _, c := range cases {
		if c.allowed {
			c.who = serviceAccount{namespace: other, name: c.who.name}
			c.allowed, c.description = false, "the launcher's rights, asked for by its namesake in another namespace"
			cases = append(cases, c)
			c.namespace = other
			cases = append(cases, c)
		}
	}
	return cases
}

// reviewAccess asks the API server each question, once the launcher's
// RoleBinding has taken effect.
func reviewAccess(t *testing.T, launcher serviceAccount, ns string, cases []access) {
	t.Helper()
	// The RBAC authorizer learns of the Role and RoleBinding through
	// informers, a moment after they are written.
	first := cases[0]
	require.True(t, first.allowed && first.who == launcher, "the first case shows the binding in effect")
	err := waitUntil("the launcher's RoleBinding to take effect", func(ctx context.Context) error {
		review, err := accessReview(ctx, first.who, first.verb, first.resource, first.name, first.namespace)
		if err != nil {
			return err
		}
		if !review.Status.Allowed {
			return errors.New(explain(review))
		}
		return nil
	})
	require.NoError(t, err)

	// Stable subtest names: the namespaces' names are random.
	label := func(c access) string {
		who, where, name := "launcher", "the job's namespace", c.name
		if c.who != launcher {
			who = "namesake in another namespace"
		}
		if c.namespace != ns {
			where = "another namespace"
		}
		if name == "" {
			name = "any"
		}
		return fmt.Sprintf("%s %s %s %s in %s", who, c.verb, strings.ReplaceAll(c.resource, "/", " "), name, where)
	}
	for _, c := range cases {
		t.Run(label(c), func(t *testing.T) {
			review, err := accessReview(context.Background(), c.who, c.verb, c.resource, c.name, c.namespace)
			require.NoError(t, err)
			require.Empty(t, review.Status.EvaluationError, "the authorizer could not evaluate the review")
			want := "denied"
			if c.allowed {
				want = "allowed"
			}
			target := c.resource
			if c.name != "" {
				target += " " + c.name
			}
			assert.Equal(t, c.allowed, review.Status.Allowed,
				"may %s %s %s in namespace %s? want %s (%s); the API server: %s",
				c.who, c.verb, target, c.namespace, want, c.description, explain(review))
		})
	}
}

// checkExecPods holds what the launcher's Role says the name of every pod
// it may exec into is (handoff.ExecPods), for the admission policy that
// keeps it to them, to the names the Job controller gave the job's
// workers' pods: a worker whose name did not match would be one the
// launcher could not reach.
func checkExecPods(t *testing.T, objs []*unstructured.Unstructured, workers []*corev1.Pod) {
	for _, obj := range objs {
		pattern, ok := obj.GetAnnotations()[handoff.ExecPods]
		if obj.GetKind() != "Role" || !ok {
			continue
		}
		pods, err := regexp.Compile(pattern)
		require.NoError(t, err, "Role %s: %s", obj.GetName(), handoff.ExecPods)
		job := obj.GetLabels()[handoff.JobNameLabel]
		n := 0
		for _, pod := range workers {
			if pod.Labels[handoff.JobNameLabel] != job {
				continue
			}
			n++
			assert.Regexp(t, pods, pod.Name,
				"worker pod %s does not match what Role %s says every pod its launcher may exec into is", pod.Name, obj.GetName())
		}
		require.NotZero(t, n, "Role %s: no worker pod of job %s to hold its expression to", obj.GetName(), job)
		t.Logf("Role %s: the %d worker pods of job %s match %q", obj.GetName(), n, job, pattern)
	}
}

// serviceAccount is a ServiceAccount as the API server authenticates it.
type serviceAccount struct{ namespace, name string }

func (sa serviceAccount) String() string {
	return "system:serviceaccount:" + sa.namespace + ":" + sa.name
}

// groups are the groups the API server puts a ServiceAccount's token in.
func (sa serviceAccount) groups() []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.namespace, "system:authenticated"}
}

// accessReview asks the API server whether a ServiceAccount may do
// something, resource being resource[/subresource] in the core group.
func accessReview(ctx context.Context, who serviceAccount, verb, resource, name, namespace string) (*authorizationv1.SubjectAccessReview, error) {
	resource, subresource, _ := strings.Cut(resource, "/")
	return kube.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   who.String(),
			Groups: who.groups(),
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace:   namespace,
				Verb:        verb,
				Group:       "",
				Resource:    resource,
				Subresource: subresource,
				Name:        name,
			},
		},
	}, metav1.CreateOptions{})
}

// explain is what the authorizer said of a review.
func explain(review *authorizationv1.SubjectAccessReview) string {
	s := review.Status
	verdict := "denied"
	if s.Allowed {
		verdict = "allowed"
	}
	if s.Reason != "" {
		verdict += ": " + s.Reason
	}
	if s.EvaluationError != "" {
		verdict += " (evaluation error: " + s.EvaluationError + ")"
	}
	return verdict
}
