package node

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// grant gives one of the cluster's users the rules given, in a ClusterRole
// and a binding named after the user, as the component's own deployment
// would grant its service account.
func (n *Node) grant(ctx context.Context, user string, rules []rbacv1.PolicyRule) error {
	rbac := n.Client.RbacV1()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	_, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	return err
}
