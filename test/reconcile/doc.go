// Package reconcile runs trainfn's reconciler (trainfn-reconciler) against a
// real control plane with kwok's fake kubelets (see test/cluster): jobs are
// rendered by the trainfn binary, applied with server-side apply as a
// GitOps controller would, and changed at run time the ways a cluster
// changes them (scaling, pods failing, processes and the API server
// restarting). It needs the build tag e2e; `make e2e` runs it.
package reconcile
