//go:build e2e

package reconcile

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// chartDir is trainfn-reconciler's chart, as users install it.
var chartDir = filepath.Join("..", "..", "charts", "trainfn-reconciler")

// installs are the chart's installs, one per namespace whose reconcilers
// run as its ServiceAccount.
var installs sync.Map

// installFor installs the reconciler's chart for a test's namespace, as a
// user watching that namespace alone would, DIJobs on: every reconciler
// of the suite runs with the rights the chart gives and under its
// admission policy, so that a right the code needs and the chart lacks
// fails the test that needs it. The release is the namespace's own, its
// cluster-wide objects removed when the test ends.
func installFor(t *testing.T, ns string) *cluster.ReconcilerInstall {
	t.Helper()
	if in, ok := installs.Load(ns); ok {
		return in.(*cluster.ReconcilerInstall)
	}
	in := install(t, "r-"+ns, ns, "--set", "watchNamespaces={"+ns+"}", "--set", "diJobs.enabled=true,progress.enabled=true")
	installs.Store(ns, in)
	return in
}

// install installs the reconciler's chart as release in ns with the helm
// arguments given.
func install(t *testing.T, release, ns string, args ...string) *cluster.ReconcilerInstall {
	t.Helper()
	helm, ok := testtool.Built("helm")
	if !ok {
		t.Fatal("helm is not built: run hack/tools.sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := kube.InstallReconcilerChart(ctx, helm, chartDir, release, ns, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeClusterObjects(t, in) })
	return in
}

// removeClusterObjects deletes what an install made outside namespaces,
// which the namespace's deletion leaves.
func removeClusterObjects(t *testing.T, in *cluster.ReconcilerInstall) {
	dyn, err := dynamic.NewForConfig(kube.Config)
	if err != nil {
		t.Error(err)
		return
	}
	resources := map[string]schema.GroupVersionResource{
		"ClusterRole":                      {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		"ClusterRoleBinding":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
		"ValidatingAdmissionPolicy":        {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
		"ValidatingAdmissionPolicyBinding": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
	}
	for _, obj := range in.Objects {
		if res, ok := resources[obj.GetKind()]; ok {
			_ = dyn.Resource(res).Delete(context.Background(), obj.GetName(), metav1.DeleteOptions{})
		}
	}
}
