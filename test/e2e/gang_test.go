//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/trainfn/trainfn/test/cluster"
)

// The gang schedulers whose PodGroups trainfn renders publish their CRDs in
// their Go modules, fetched from the module proxy like any dependency. The
// releases are pinned so that a run is reproducible and a newer CRD is
// taken on deliberately, by a change here; the suite applies golden
// outputs, which may only be judged against one known schema. Volcano
// v1.10.0 serves PodGroup as scheduling.volcano.sh/v1beta1, and
// scheduler-plugins v0.31.8 (the release for Kubernetes 1.31) serves
// coscheduling's as scheduling.x-k8s.io/v1alpha1: the versions trainfn
// renders.
const (
	volcanoModule          = "volcano.sh/volcano@v1.10.0"
	schedulerPluginsModule = "sigs.k8s.io/scheduler-plugins@v0.31.8"
)

// gangCRDs are the PodGroup CRDs, by module and path in it.
var gangCRDs = []struct{ module, path string }{
	{volcanoModule, "config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml"},
	{schedulerPluginsModule, "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml"},
}

// installGangCRDs fetches the pinned modules and installs their PodGroup
// CRDs, so that the API server accepts the PodGroups trainfn renders.
// Kueue needs none: trainfn only labels the Jobs it admits.
func installGangCRDs(ctx context.Context, c *cluster.Cluster) error {
	var crds []*unstructured.Unstructured
	for _, crd := range gangCRDs {
		dir, err := cluster.ModuleDir(ctx, crd.module)
		if err != nil {
			return err
		}
		objs, err := cluster.ReadObjects(filepath.Join(dir, filepath.FromSlash(crd.path)))
		if err != nil {
			return err
		}
		crds = append(crds, objs...)
	}
	if err := withNetworkTopology(crds); err != nil {
		return err
	}
	return c.InstallCRDObjects(ctx, crds)
}

// standInSchedulers are the names of the gang schedulers, which do not run
// here: kube-scheduler answers to them too, so that the pods that name one
// are placed, and the suite can check the rest of what the output promises.
// It places them one by one, not as a gang; checkPodGroups checks that each
// PodGroup is one a gang scheduler could start.
var standInSchedulers = []string{
	"volcano",                     // Volcano's
	"scheduler-plugins-scheduler", // scheduler-plugins' default
	"coscheduler",                 // the name testdata/gang-scheduler-plugins configures
}

// podGroupMembership is how each PodGroup kind's scheduler finds the pods
// of a group: by an annotation (Volcano) or a label (scheduler-plugins) of
// the pod that names it, or by its spec.schedulingGroup (Kubernetes'
// own); and where the group's size is.
var podGroupMembership = map[string]struct {
	annotation, label string
	schedulingGroup   bool
	size              []string
	// gangScheduler: the default scheduler is the group's own.
	gangScheduler bool
}{
	"scheduling.volcano.sh/v1beta1": {annotation: "scheduling.k8s.io/group-name", size: []string{"spec", "minMember"}},
	"scheduling.x-k8s.io/v1alpha1":  {label: "scheduling.x-k8s.io/pod-group", size: []string{"spec", "minMember"}},
	"scheduling.k8s.io/v1beta1":     {schedulingGroup: true, size: []string{"spec", "schedulingPolicy", "gang", "minCount"}, gangScheduler: true},
}

// checkPodGroups checks each PodGroup of the output against the running
// pods that belong to it: there are at least minMember of them, else its
// scheduler would never start the gang, and they all name one scheduler,
// not the default one, which knows no gangs but Kubernetes' own.
func checkPodGroups(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	for _, obj := range objs {
		if obj.GetKind() != "PodGroup" {
			continue
		}
		membership, ok := podGroupMembership[obj.GetAPIVersion()]
		require.True(t, ok, "PodGroup %s is %s, which the suite does not know the members of", obj.GetName(), obj.GetAPIVersion())
		// Decoded from YAML as JSON is, a number is a float64 here; none
		// is the API's zero.
		minMember, _, err := unstructured.NestedFloat64(obj.Object, membership.size...)
		require.NoError(t, err)
		pods, err := kube.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		var members, schedulers []string
		for _, pod := range pods.Items {
			if membership.annotation != "" && pod.Annotations[membership.annotation] != obj.GetName() ||
				membership.label != "" && pod.Labels[membership.label] != obj.GetName() ||
				membership.schedulingGroup && (pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil ||
					*pod.Spec.SchedulingGroup.PodGroupName != obj.GetName()) {
				continue
			}
			members = append(members, pod.Name)
			if !slices.Contains(schedulers, pod.Spec.SchedulerName) {
				schedulers = append(schedulers, pod.Spec.SchedulerName)
			}
		}
		require.GreaterOrEqual(t, float64(len(members)), minMember,
			"PodGroup %s wants %v pods to start together, but only %v belong to it", obj.GetName(), minMember, members)
		require.Len(t, schedulers, 1, "the pods of PodGroup %s name different schedulers: %v", obj.GetName(), schedulers)
		if !membership.gangScheduler {
			require.NotEqual(t, corev1.DefaultSchedulerName, schedulers[0], "the pods of PodGroup %s are left to the default scheduler, which knows no gangs", obj.GetName())
		}
		t.Logf("PodGroup %s: %d pods of at least %v, for %s: %v", obj.GetName(), len(members), minMember, schedulers[0], members)
	}
}

// podTemplates are the pod templates of the output's Jobs and StatefulSets.
func podTemplates(t *testing.T, objs []*unstructured.Unstructured) []corev1.PodTemplateSpec {
	var templates []corev1.PodTemplateSpec
	for _, obj := range objs {
		switch obj.GroupVersionKind() {
		case batchv1.SchemeGroupVersion.WithKind("Job"):
			var job batchv1.Job
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &job))
			templates = append(templates, job.Spec.Template)
		case appsv1.SchemeGroupVersion.WithKind("StatefulSet"):
			var sts appsv1.StatefulSet
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &sts))
			templates = append(templates, sts.Spec.Template)
		}
	}
	return templates
}

// checkSchedulers fails at once, not after pods have waited in vain, when
// a pod template names a scheduler that nothing here answers to.
func checkSchedulers(t *testing.T, objs []*unstructured.Unstructured) {
	for _, tmpl := range podTemplates(t, objs) {
		name := tmpl.Spec.SchedulerName
		require.True(t, name == "" || name == corev1.DefaultSchedulerName || slices.Contains(standInSchedulers, name),
			"pods name the scheduler %q, which no scheduler here answers to: add it to standInSchedulers", name)
	}
}

// ensurePriorityClasses creates the PriorityClasses the output's pods name,
// as a cluster administrator would have: the API server refuses a pod that
// names one that does not exist. They are cluster-wide, shared by every
// test, and left in place.
func ensurePriorityClasses(t *testing.T, objs []*unstructured.Unstructured) {
	for _, tmpl := range podTemplates(t, objs) {
		name := tmpl.Spec.PriorityClassName
		if name == "" || name == "system-cluster-critical" || name == "system-node-critical" {
			continue
		}
		_, err := kube.Client.SchedulingV1().PriorityClasses().Create(context.Background(), &schedulingv1.PriorityClass{
			ObjectMeta:  metav1.ObjectMeta{Name: name},
			Description: "made by trainfn's end-to-end suite: an output's pods name it",
		}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err, "creating PriorityClass %s", name)
		}
	}
}
