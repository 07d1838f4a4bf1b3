//go:build e2e

package diserver

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	di "github.com/trainfn/trainfn/reconciler/diserver"
)

// The DI server holds here the rights its package declares it needs
// (diserver.Rules, and with tokenReview diserver.TokenReviewRules) and
// nothing else: the tests fail if it needs one more.
var (
	diServerRules            = di.Rules
	diServerTokenReviewRules = di.TokenReviewRules
)

// asDIServer is a client signed in as a service account of ns that holds
// diServerRules there and nothing else, and with tokenReview the
// diServerTokenReviewRules; and the counter of what it asks.
func asDIServer(t *testing.T, ns string, tokenReview bool) (client.Client, *counter) {
	t.Helper()
	const name = "di-server"
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: diServerRules})
	user := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
	create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{user},
	})
	if tokenReview {
		cluster := ns + "-" + name
		createClusterWide(t, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: cluster}, Rules: diServerTokenReviewRules})
		createClusterWide(t, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: cluster},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cluster},
			Subjects:   []rbacv1.Subject{user},
		})
	}
	config := rest.CopyConfig(kube.Config)
	config.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	check, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of new roles from a watch, a moment later.
	eventually(t, "the DI server's roles are in force", func(ctx context.Context) error {
		for _, obj := range []client.Object{&appsv1.StatefulSet{}, &batchv1.Job{}} {
			if err := check.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nonesuch"}, obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("reading a %T: %v", obj, err)
			}
		}
		if tokenReview {
			review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "nonesuch"}}
			if err := check.Create(ctx, review); err != nil {
				return err
			}
		}
		return nil
	})
	requests := &counter{seen: map[string]int{}}
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &counting{next: rt, counter: requests} })
	c, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, requests
}

func createClusterWide(t *testing.T, obj client.Object) {
	t.Helper()
	create(t, obj)
	t.Cleanup(func() {
		ctx, cancel := timeout()
		defer cancel()
		_ = live.Delete(ctx, obj)
	})
}

// counter counts requests, by method and path less the namespace.
type counter struct {
	mu   sync.Mutex
	seen map[string]int
	all  int
}

// total is how many requests were made.
func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all
}

// String lists the requests made, the most frequent first.
func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var lines []string
	for what, n := range c.seen {
		lines = append(lines, fmt.Sprintf("%6d %s", n, what))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(lines)))
	return strings.Join(lines, "\n")
}

// counting is a RoundTripper that counts every request it passes on.
type counting struct {
	next    http.RoundTripper
	counter *counter
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	path := req.URL.Path
	if before, after, ok := strings.Cut(path, "/namespaces/"); ok {
		_, rest, _ := strings.Cut(after, "/")
		path = before + "/namespaces/*/" + rest
	}
	c.counter.mu.Lock()
	c.counter.seen[req.Method+" "+path]++
	c.counter.all++
	c.counter.mu.Unlock()
	return c.next.RoundTrip(req)
}
