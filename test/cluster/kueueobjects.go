package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Kueue's kinds, read and made through the dynamic client, so that no
// Kueue package is linked into the suites.
var (
	kueueWorkloads      = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	kueueClusterQueues  = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	kueueResourceFlavor = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
	kueueTopologies     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "topologies"}
)

// Flavor is what a ClusterQueue's one ResourceFlavor asks of nodes: their
// labels, and the levels of a Topology, from the widest domain to the
// node, for Kueue's topology-aware scheduling; none, any node.
type Flavor struct {
	NodeLabels     map[string]string
	TopologyLevels []string
}

// Workload is what a test reads of a Kueue Workload.
type Workload struct {
	Name string
	// Pods is how many pods it admits, over its PodSets.
	Pods int64
	// Admitted, Finished: its conditions.
	Admitted, Finished bool
	// Message is its QuotaReserved condition's: why it waits, if it does.
	Message string
	// RequiredTopologies are its PodSets' required topology levels, by
	// PodSet, "" for one that requires none.
	RequiredTopologies []string
	// Owner is the kind and name of the object it admits (Job/pi-worker);
	// "" for a pod group's, which many pods own.
	Owner string
}

// Workloads are the Kueue Workloads of a namespace, by name.
func (c *Cluster) Workloads(ctx context.Context, ns string) ([]Workload, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	list, err := dyn.Resource(kueueWorkloads).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []Workload
	for _, obj := range list.Items {
		wl := Workload{Name: obj.GetName()}
		if owners := obj.GetOwnerReferences(); len(owners) == 1 {
			wl.Owner = owners[0].Kind + "/" + owners[0].Name
		}
		sets, _, _ := unstructured.NestedSlice(obj.Object, "spec", "podSets")
		for _, s := range sets {
			s, _ := s.(map[string]any)
			n, _ := s["count"].(int64)
			wl.Pods += n
			required, _, _ := unstructured.NestedString(s, "topologyRequest", "required")
			wl.RequiredTopologies = append(wl.RequiredTopologies, required)
		}
		conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, cond := range conditions {
			cond, _ := cond.(map[string]any)
			on := cond["status"] == "True"
			switch cond["type"] {
			case "Admitted":
				wl.Admitted = on
			case "Finished":
				wl.Finished = on
			case "QuotaReserved":
				wl.Message, _ = cond["message"].(string)
			}
		}
		out = append(out, wl)
	}
	slices.SortFunc(out, func(a, b Workload) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out, nil
}

// DeleteWorkload deletes a Workload, as kubectl delete workload does.
func (c *Cluster) DeleteWorkload(ctx context.Context, ns, name string) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	return dyn.Resource(kueueWorkloads).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
}

// ClusterQueue makes a ResourceFlavor and a ClusterQueue of that name for
// every namespace, whose quota in that flavor is the given resources (and
// a Topology of that name, if the flavor has levels), and returns what
// removes them.
func (c *Cluster) ClusterQueue(ctx context.Context, name string, quota corev1.ResourceList, flavor Flavor) (remove func(), err error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	var covered, resources []any
	for _, r := range slices.Sorted(maps.Keys(quota)) {
		q := quota[r]
		covered = append(covered, string(r))
		resources = append(resources, map[string]any{"name": string(r), "nominalQuota": q.String()})
	}
	type object struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}
	var objects []object
	flavorSpec := map[string]any{}
	if len(flavor.NodeLabels) > 0 {
		labels := map[string]any{}
		for k, v := range flavor.NodeLabels {
			labels[k] = v
		}
		flavorSpec["nodeLabels"] = labels
	}
	if len(flavor.TopologyLevels) > 0 {
		var levels []any
		for _, l := range flavor.TopologyLevels {
			levels = append(levels, map[string]any{"nodeLabel": l})
		}
		objects = append(objects, object{kueueTopologies, map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"levels": levels},
		}})
		flavorSpec["topologyName"] = name
	}
	objects = append(objects,
		object{kueueResourceFlavor, map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": map[string]any{"name": name}, "spec": flavorSpec}},
		object{kueueClusterQueues, map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"namespaceSelector": map[string]any{},
				"resourceGroups": []any{map[string]any{
					"coveredResources": covered,
					"flavors":          []any{map[string]any{"name": name, "resources": resources}},
				}},
			},
		}})
	var made []schema.GroupVersionResource
	remove = func() {
		for _, gvr := range slices.Backward(made) {
			_ = dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	}
	for _, o := range objects {
		if _, err := dyn.Resource(o.gvr).Create(ctx, &unstructured.Unstructured{Object: o.obj}, metav1.CreateOptions{}); err != nil {
			remove()
			return nil, fmt.Errorf("creating %s %s: %w", o.obj["kind"], name, err)
		}
		made = append(made, o.gvr)
	}
	return remove, nil
}

// ReservingWorkloads is how many Workloads hold quota of a ClusterQueue.
func (c *Cluster) ReservingWorkloads(ctx context.Context, clusterQueue string) (int64, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return 0, err
	}
	cq, err := dyn.Resource(kueueClusterQueues).Get(ctx, clusterQueue, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("no ClusterQueue %s", clusterQueue)
	}
	if err != nil {
		return 0, err
	}
	n, _, _ := unstructured.NestedInt64(cq.Object, "status", "reservingWorkloads")
	return n, nil
}

// LocalQueue is a LocalQueue of that name, in the namespace it is applied
// to, for a ClusterQueue: YAML, to apply with a job.
func LocalQueue(name, clusterQueue string) string {
	return fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: %s
spec:
  clusterQueue: %s
`, name, clusterQueue)
}

// KueueFunctionConfig is trainfn's function config that queues every job
// on a LocalQueue, with more of its spec, if any, indented under spec:
// YAML, to render with a job.
func KueueFunctionConfig(localQueue, more string) string {
	return fmt.Sprintf(`apiVersion: fn.trainfn.dev/v1alpha1
kind: TrainFn
metadata:
  name: trainfn
spec:
  gangScheduling:
    scheduler: Kueue
    queue: %s
%s`, localQueue, more)
}
