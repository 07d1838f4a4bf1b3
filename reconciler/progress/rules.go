package progress

import rbacv1 "k8s.io/api/rbac/v1"

// Rules are the rights the progress server needs in the namespaces it
// serves: patch the trainer-status annotation of a job's first workload
// and the CA key of its CA ConfigMap. Its reads are the reconciler's cache.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"patch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"patch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"patch"}},
}

// ClusterRules are its rights cluster-wide: TokenReviews belong to no
// namespace.
var ClusterRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
}

// SecretRules are its rights in its own namespace: its TLS Secret, read
// and renewed by name, and created (creation cannot be limited by name:
// the Secret does not exist yet).
func SecretRules(secret string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{secret}, Verbs: []string{"get", "update"}},
	}
}
