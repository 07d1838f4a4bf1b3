package status

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// groupVersions are the API group and version a job's document names for
// its kind: the version its operator serves today, whose status the
// document's is shaped like. The workloads do not record the version a job
// was written in; the status has one shape across an operator's versions.
var groupVersions = map[string]schema.GroupVersion{
	"MPIJob":     {Group: "kubeflow.org", Version: "v2beta1"},
	"PyTorchJob": {Group: "kubeflow.org", Version: "v1"},
	"DIJob":      {Group: "diengine.opendilab.org", Version: "v2alpha1"},
	"TrainJob":   {Group: "trainer.kubeflow.org", Version: "v1alpha1"},
}

// statusGroupVersion names the document of a job of no known kind.
var statusGroupVersion = schema.GroupVersion{Group: "trainfn.dev", Version: "v1alpha1"}

// GroupVersionKind is the API group, version and kind a job's document
// carries, as its operator's objects carry them.
func GroupVersionKind(kind string) schema.GroupVersionKind {
	if gv, ok := groupVersions[kind]; ok {
		return gv.WithKind(kind)
	}
	return statusGroupVersion.WithKind(kind)
}

// Object is a job as one Kubernetes-shaped document: apiVersion and kind as
// its operator's object has them, metadata (name, namespace,
// creationTimestamp), and under status everything else Job holds, so that
// `-o jsonpath='{.status.conditions}'`, written for the operator's
// objects, reads it unchanged.
func Object(j Job) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	metadata := map[string]any{"name": j.Name, "namespace": j.Namespace}
	if !j.Created.IsZero() {
		metadata["creationTimestamp"] = fields["created"]
	}
	for _, k := range []string{"name", "namespace", "kind", "created"} {
		delete(fields, k)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": metadata, "status": fields}}
	obj.SetGroupVersionKind(GroupVersionKind(j.Kind))
	return obj, nil
}

// ListObject is several jobs as kubectl writes a list: a v1 List of their
// documents.
func ListObject(jobs []Job) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"metadata": map[string]any{}}}
	list.SetAPIVersion("v1")
	list.SetKind("List")
	list.Items = make([]unstructured.Unstructured, 0, len(jobs))
	for _, j := range jobs {
		obj, err := Object(j)
		if err != nil {
			return nil, fmt.Errorf("job %s/%s: %w", j.Namespace, j.Name, err)
		}
		list.Items = append(list.Items, *obj)
	}
	return list, nil
}

// Ref is how a job is named on the command line and in `-o name` output:
// its kind in lower case, a slash and its name, as Get takes it.
func Ref(j Job) string { return strings.ToLower(j.Kind) + "/" + j.Name }

// Name is how kubectl names the job's object, as -o name writes it and
// kubectl wait reports it: its kind in lower case, its group, a slash and
// its name (pytorchjob.kubeflow.org/mnist).
func Name(j Job) string {
	gvk := GroupVersionKind(j.Kind)
	return strings.ToLower(gvk.Kind) + "." + gvk.Group + "/" + j.Name
}

// ParseRef reads a job reference: NAME, KIND/NAME, or kubectl's
// KIND.GROUP/NAME (mpijob.kubeflow.org/pi, as `-o name` writes it), into
// the KIND/NAME or NAME Get takes.
func ParseRef(ref string) string {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok {
		return ref
	}
	kind, _, _ = strings.Cut(kind, ".")
	return kind + "/" + name
}
