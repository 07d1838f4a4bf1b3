//go:build e2e

package diserver

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	di "github.com/trainfn/trainfn/reconciler/diserver"
	"github.com/trainfn/trainfn/render/handoff"
)

// Only the job's own pods may call about it, known by the address their
// requests come from: not another job's pod, nor a pod that merely copies
// the job's labels, nor an address that is no pod's; and a bearer token
// counts for nothing while tokens are not reviewed.
func TestOnlyTheJobsPodsMayCall(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{})
	mine := preemptible{name: "mine", generation: 1, bounds: "1:3", replicas: 1}.create(t, ns)
	theirs := preemptible{name: "theirs", generation: 1, bounds: "1:3", replicas: 1}.create(t, ns)
	impostor := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "impostor", Labels: handoff.RoleLabels("mine", handoff.RoleWorker)},
		Spec:       podTemplate(nil, corev1.RestartPolicyAlways).Spec,
	}
	create(t, impostor)
	own, other := s.fromPodOf(t, mine), s.fromPodOf(t, theirs)
	var impostorIP string
	eventually(t, "the impostor runs", func(ctx context.Context) error {
		if err := live.Get(ctx, client.ObjectKeyFromObject(impostor), impostor); err != nil {
			return err
		}
		if impostorIP = impostor.Status.PodIP; impostorIP == "" || impostor.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s, IP %q", impostor.Status.Phase, impostorIP)
		}
		return nil
	})
	objs := []client.Object{mine, theirs}
	before := settled(t, objs...)
	path := replicasPath(ns, "mine", 1)

	for _, c := range []*caller{other, s.from(impostorIP), s.from("127.0.0.1"), other.with("any-token")} {
		for _, r := range []struct{ method, path, body string }{
			{"GET", path, ""},
			{"POST", path, `{"replicas": 1}`},
			{"POST", profilingsPath(ns, "mine", 1), `{"data": {"throughput": 1}}`},
		} {
			a := c.call(t, r.method, r.path, r.body)
			if a.status != http.StatusForbidden || !strings.Contains(a.Message, "from none of the job's pods") {
				t.Errorf("%s %s from %s: answered %v; want 403", r.method, r.path, c.from, a)
			}
			if !a.closed {
				t.Errorf("%s %s from %s: the connection is kept open after a refusal", r.method, r.path, c.from)
			}
			if c.token != "" && !strings.Contains(a.Message, "--di-server-token-review is off") {
				t.Errorf("%s %s with a token: answered %v; want a word that tokens are not reviewed", r.method, r.path, a)
			}
		}
	}
	if after := versions(t, objs...); !maps.Equal(before, after) {
		t.Errorf("refused callers changed the objects: resourceVersions %v, then %v", before, after)
	}
	if a := own.call(t, "POST", path, `{"replicas": 1}`); a.status != http.StatusOK {
		t.Errorf("the job's own pod was refused: %v", a)
	}
	requireReplicas(t, mine, 2)
}

// With token review on, a caller that is no pod of the job is served when
// it presents a token issued for the DI server whose user holds the rights
// to what the request does: list pods to read the job, and patch the
// workload a write changes. The job's own pods still need no token.
func TestTokenCallers(t *testing.T) {
	t.Parallel()
	ns := kube.Namespace(t)
	s := serveAPI(t, ns, serving{policy: di.Policy{TokenReview: true}})
	set := preemptible{name: "tokens", generation: 1, bounds: "1:4", replicas: 1}.create(t, ns)
	path := replicasPath(ns, "tokens", 1)
	read := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}
	scale := rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"patch"}, ResourceNames: []string{set.Name}}
	reader := serviceAccount(t, ns, "reader", read)
	scaler := serviceAccount(t, ns, "scaler", read, scale)
	nobody := serviceAccount(t, ns, "nobody")
	own := s.fromPodOf(t, set)
	stranger := s.from("127.0.0.1")

	for _, tc := range []struct {
		name, token string
		status      int
		mentions    string
	}{
		{"no token", "", http.StatusUnauthorized, "has no bearer token"},
		{"a made-up token", "made-up", http.StatusUnauthorized, "bearer token: not valid"},
		{"a token for the API server", token(t, ns, "scaler"), http.StatusUnauthorized, "not issued for audience " + di.Audience},
		{"the cluster admin's static token", kube.Config.BearerToken, http.StatusUnauthorized, "not issued for audience " + di.Audience},
		{"a user with no rights", nobody, http.StatusForbidden, `user "system:serviceaccount:` + ns + `:nobody" may not list pods in namespace ` + ns},
	} {
		a := stranger.with(tc.token).call(t, "POST", path, `{"replicas": 1}`)
		if a.status != tc.status || !strings.Contains(a.Message, tc.mentions) {
			t.Errorf("%s: answered %v; want %d saying %q", tc.name, a, tc.status, tc.mentions)
		}
		if tc.status == http.StatusUnauthorized && !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: a 401 without a Bearer challenge: %v", tc.name, a.header)
		}
		if tc.token != "" && strings.Contains(a.Message, tc.token) {
			t.Errorf("%s: the answer repeats the token", tc.name)
		}
	}
	requireReplicas(t, set, 1)

	if a := stranger.with(reader).call(t, "GET", path, ""); a.status != http.StatusOK {
		t.Errorf("a reader's GET: %v", a)
	}
	a := stranger.with(reader).call(t, "POST", path, `{"replicas": 1}`)
	if want := "may not patch statefulsets.apps/" + set.Name; a.status != http.StatusForbidden || !strings.Contains(a.Message, want) {
		t.Errorf("a reader's POST: answered %v; want 403 saying %q", a, want)
	}
	requireReplicas(t, set, 1)
	if a := stranger.with(scaler).call(t, "POST", path, `{"replicas": 1}`); a.status != http.StatusOK {
		t.Errorf("a scaler's POST: %v", a)
	}
	requireReplicas(t, set, 2)
	if a := stranger.with(scaler).call(t, "GET", replicasPath(ns, "nonesuch", 1), ""); a.status != http.StatusNotFound {
		t.Errorf("a scaler's GET of a job that does not exist: answered %v; want 404", a)
	}
	if a := own.call(t, "DELETE", path, `{"replicas": 1}`); a.status != http.StatusOK {
		t.Errorf("the job's own pod, with no token: %v", a)
	}
	requireReplicas(t, set, 1)

	// A token polling the API is reviewed once per ReviewCacheTTL: one
	// TokenReview and one SubjectAccessReview.
	before, start := s.requests.total(), time.Now()
	for range 50 {
		if a := stranger.with(reader).call(t, "GET", path, ""); a.status != http.StatusOK {
			t.Fatalf("a reader's GET: %v", a)
		}
	}
	periods := int(time.Since(start)/di.ReviewCacheTTL) + 2
	if reviews := s.requests.total() - before; reviews > 2*periods {
		t.Errorf("50 GETs with one token over %s cost %d requests, more than two reviews in each of %d periods:\n%s",
			time.Since(start).Round(time.Millisecond), reviews, periods, s.requests)
	}
}

// serviceAccount makes a service account of ns holding rules there, and
// returns a token of it for the DI server, once its rights are in force.
func serviceAccount(t *testing.T, ns, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	user := "system:serviceaccount:" + ns + ":" + name
	if len(rules) > 0 {
		create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules})
		create(t, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		})
		// Asked before the role is in force, the DI server would remember
		// the refusal for a while.
		last := rules[len(rules)-1]
		eventually(t, user+"'s rights are in force", func(ctx context.Context) error {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: last.Verbs[0],
					Group: last.APIGroups[0], Resource: last.Resources[0], Name: strings.Join(last.ResourceNames, "")},
			}}
			if err := live.Create(ctx, review); err != nil {
				return err
			}
			if !review.Status.Allowed {
				return fmt.Errorf("not yet: %s", review.Status.Reason)
			}
			return nil
		})
	}
	return token(t, ns, name, di.Audience)
}

// token is a token of a service account of ns, for the audiences given, or
// the API server's.
func token(t *testing.T, ns, name string, audiences ...string) string {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: audiences, ExpirationSeconds: ptr.To[int64](3600),
	}}
	got, err := kube.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, request, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token of %s: %v", name, err)
	}
	return got.Status.Token
}
