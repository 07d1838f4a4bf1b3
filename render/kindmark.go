package render

import (
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/ynode"
)

// markKind labels every workload among a job's objects (its Jobs and
// StatefulSets), and their pods, with the kind of the job's spec, which
// the reconciler and trainfn status read on the workloads, and a
// NetworkPolicy on the pods (the reconciler's chart admits only a DIJob's
// pods to its DI server) (handoff.KindLabel). A pass, not a kind's own
// step, so that the kind's name comes from the table of kinds alone.
func markKind(objects []*yaml.RNode, kind string) error {
	for _, o := range objects {
		switch o.GetApiVersion() + " " + o.GetKind() {
		case "batch/v1 Job", "apps/v1 StatefulSet":
			for _, path := range [][]string{
				{yaml.MetadataField, yaml.LabelsField},
				{"spec", "template", yaml.MetadataField, yaml.LabelsField},
			} {
				labels, err := o.Pipe(yaml.LookupCreate(yaml.MappingNode, path...))
				if err != nil {
					return err
				}
				setSorted(labels.YNode(), handoff.KindLabel, kind)
			}
		}
	}
	return nil
}

// setSorted sets a string field of a mapping whose keys are in order,
// where that order puts it, so that the mapping reads as the rest of the
// rendered labels do.
func setSorted(m *yaml.Node, key, value string) {
	if v := ynode.Get(m, key); v != nil {
		ynode.Set(m, key, ynode.String(value))
		return
	}
	i := 0
	for i < len(m.Content) && m.Content[i].Value < key {
		i += 2
	}
	m.Content = slices.Insert(m.Content, i, ynode.String(key), ynode.String(value))
}
