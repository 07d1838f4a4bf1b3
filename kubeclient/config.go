// Package kubeclient reaches the API server as kubectl does, for
// trainfn's commands that read or change a cluster (status,
// delete-changed): through client-go's rest package and the few API
// groups they use, never a scheme of every group, so that the KRM
// function started once per build does not pay for registering them.
package kubeclient

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config finds the API server and the namespace as kubectl does: the
// kubeconfig given, else the files $KUBECONFIG lists, else ~/.kube/config,
// and, when none exists, the service account of the pod it runs in. The
// namespace is the current context's, else "default" (in a pod, its own).
//
// Like the reconciler's, the client does not throttle itself: a status is
// three lists, a delete-changed a request or two per Job.
func Config(kubeconfig string) (*rest.Config, string, error) {
	return load(kubeconfig, &clientcmd.ConfigOverrides{})
}
