package observed

import rbacv1 "k8s.io/api/rbac/v1"

// Rules are the rights reading jobs needs: the label-filtered cache lists
// and watches the objects trainfn renders (RBAC cannot grant by label, so
// these reach every such object of a namespace it holds them in; the
// cache keeps only trainfn's). It never gets one by name from the API:
// the concerns that read an object live say so in their own rules.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods", "configmaps"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"list", "watch"}},
}
