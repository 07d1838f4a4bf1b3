//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// TestKubectlExecLauncherRBAC applies what an MPIJob in the KubectlExec
// launch mode renders to, and asks the API server's own RBAC authorizer
// what its launcher's ServiceAccount may do: find its job's workers and
// exec into them, the pods of its own namespace, whose names the Job
// controller makes up; nothing else, in no other namespace. The RoleBinding's subject names no namespace, which RBAC
// reads as the RoleBinding's own, so the rights follow the output into
// whichever namespace it is applied to.
func TestKubectlExecLauncherRBAC(t *testing.T) {
	t.Parallel()
	path := filepath.Join(testtool.GoldenDir(t, "mpijob-kubectl-exec"), "expected.yaml")
	objs, err := cluster.ReadObjects(path)
	require.NoError(t, err)
	ns, other := kube.Namespace(t), kube.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, serverSideApply(ctx, ns, objs), "the API server refused %s", path)

	launcher := serviceAccount{namespace: ns, name: "noshd-launcher"}
	// The same name in another namespace is another ServiceAccount; a
	// SubjectAccessReview asks about the user, whether or not it exists.
	stranger := serviceAccount{namespace: other, name: "noshd-launcher"}

	type access struct {
		who         serviceAccount
		verb        string
		resource    string // resource[/subresource]
		name        string // empty: every object, as list and create ask
		namespace   string
		allowed     bool
		description string
	}
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
	// What the launcher is allowed, the same name in another namespace is
	// not, in the job's namespace or its own: the subject binds the
	// ServiceAccount of the RoleBinding's namespace only.
	for _, c := range cases {
		if c.allowed {
			c.who, c.allowed, c.description = stranger, false, "the launcher's rights, asked for by its namesake in another namespace"
			cases = append(cases, c)
			c.namespace = other
			cases = append(cases, c)
		}
	}

	// The RBAC authorizer learns of the Role and RoleBinding through
	// informers, a moment after they are written.
	first := cases[0]
	err = waitUntil("the launcher's RoleBinding to take effect", func(ctx context.Context) error {
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
