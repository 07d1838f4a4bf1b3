package workload

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Replica is one kind of pod of a job.
type Replica struct {
	Replicas      int32
	RestartPolicy string
	// Template is the user's PodTemplateSpec; Path locates it in the spec.
	Template *yaml.RNode
	Path     *field.Path
}

// ReplicaSpec is a replica spec as Kubeflow job specs write it, the
// schema's defaults filled in; its template is read from the document.
type ReplicaSpec struct {
	Replicas      int32  `json:"replicas"`
	RestartPolicy string `json:"restartPolicy"`
}

// Replicas reads the replicas of a job spec's map of replica specs (at
// spec.<field>) in the given order; a type the spec lacks is nil.
func Replicas(doc *yaml.RNode, specs map[string]ReplicaSpec, mapField string, types ...string) ([]*Replica, error) {
	out := make([]*Replica, len(types))
	path := field.NewPath("spec", mapField)
	for i, typ := range types {
		rs, ok := specs[typ]
		if !ok {
			continue
		}
		template, err := doc.Pipe(yaml.Lookup("spec", mapField, typ, "template"))
		if err != nil || template == nil {
			return nil, fmt.Errorf("%s has no template", path.Child(typ))
		}
		out[i] = &Replica{Replicas: rs.Replicas, RestartPolicy: rs.RestartPolicy, Template: template, Path: path.Child(typ, "template")}
	}
	return out, nil
}

// OwnerOf is the job a document describes.
func OwnerOf(doc *yaml.RNode) (Owner, error) {
	meta, err := doc.GetMeta()
	if err != nil {
		return Owner{}, err
	}
	return Owner{Name: meta.Name, Namespace: meta.Namespace, Labels: meta.Labels, Annotations: meta.Annotations}, nil
}
