package progress

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/render/handoff"
)

// kind is a job kind whose pods may report their progress: the API path
// the render gives them (the job's own group, version and plural, as its
// operator serves it) and the KindLabel of its pods.
type kind struct {
	group    string
	versions []string
	plural   string
	label    string
}

// kinds are the job kinds trainfn renders. An MPIJob's pods are given the
// version of the MPIJob they were rendered from.
var kinds = []kind{
	{group: "kubeflow.org", versions: []string{"v2beta1", "v1", "v1alpha1", "v1alpha2"}, plural: "mpijobs", label: handoff.MPIJobKind},
	{group: "kubeflow.org", versions: []string{"v1"}, plural: "pytorchjobs", label: handoff.PyTorchJobKind},
	{group: "diengine.opendilab.org", versions: []string{"v2alpha1"}, plural: "dijobs", label: handoff.DIJobKind},
	{group: "trainer.kubeflow.org", versions: []string{"v1alpha1"}, plural: "trainjobs", label: TrainJobKind},
}

// TrainJobKind is the KindLabel of a TrainJob's workloads and pods.
const TrainJobKind = "TrainJob"

// Pattern is the route the server serves, as http.ServeMux reads it.
const Pattern = "POST /apis/{group}/{version}/namespaces/{namespace}/{plural}/{name}/status"

// jobOf is the job a request's path names, if the path is one of the
// kinds' and its namespace and name could be those of a job.
func jobOf(group, version, plural, namespace, name string) (observed.Key, bool) {
	i := slices.IndexFunc(kinds, func(k kind) bool {
		return k.group == group && k.plural == plural && slices.Contains(k.versions, version)
	})
	if i < 0 || len(validation.IsDNS1123Label(namespace)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return observed.Key{}, false
	}
	return observed.Key{Namespace: namespace, Kind: kinds[i].label, Name: name}, true
}
