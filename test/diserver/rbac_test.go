//go:build e2e

package diserver

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// diServerRules are the rights the DI server's live reads and writes need,
// and all they get here: the tests fail if it needs one more. Its cache
// reads (list and watch of pods, Jobs and StatefulSets) are the
// reconciler's own.
var diServerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"list", "patch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets/scale"}, Verbs: []string{"update"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"list", "patch"}},
}

// asDIServer is a client signed in as a service account of ns that holds
// diServerRules there and nothing else.
func asDIServer(t *testing.T, ns string) client.Client {
	t.Helper()
	const name = "di-server"
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: diServerRules})
	create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	})
	config := rest.CopyConfig(kube.Config)
	config.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	c, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of new roles from a watch, a moment later.
	eventually(t, "the DI server's role is in force", func(ctx context.Context) error {
		if err := c.List(ctx, &appsv1.StatefulSetList{}, client.InNamespace(ns)); err != nil {
			return err
		}
		return c.List(ctx, &batchv1.JobList{}, client.InNamespace(ns))
	})
	return c
}
