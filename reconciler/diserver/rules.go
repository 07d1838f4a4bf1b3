package diserver

import rbacv1 "k8s.io/api/rbac/v1"

// Rules are the rights the DI server's requests to the API server need in
// the namespaces it serves. Its reads are the reconciler's cache (the list
// and watch of pods, Jobs and StatefulSets package observed declares);
// what it asks of the API server is a write (a StatefulSet's replicas, a
// workload's profilings), and a live read by name of the one object a
// write lost a race for.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "patch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "patch"}},
}

// TokenReviewRules are the cluster-wide rights it needs besides, and only,
// when it reviews bearer tokens (Policy.TokenReview): those of Kubernetes'
// system:auth-delegator ClusterRole. Reviews belong to no namespace.
var TokenReviewRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
}
