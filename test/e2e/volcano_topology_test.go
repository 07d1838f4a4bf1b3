//go:build e2e

package e2e

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// volcanoPodGroups is Volcano's PodGroup CRD.
const volcanoPodGroups = "podgroups.scheduling.volcano.sh"

// withNetworkTopology adds spec.networkTopology to Volcano's PodGroup CRD.
// A Kubeflow Trainer runtime's podGroupPolicy.volcano.networkTopology goes
// there, as Trainer v2.3.0 writes it with the Volcano API it builds with
// (volcano.sh/apis v1.13's PodGroupSpec); the pinned CRD, Volcano
// v1.10.0's, the only release the module proxy serves here, predates the
// field, and strict apply would refuse it. The schema added is that
// type's, markers included (mode hard or soft, by default hard;
// highestTierAllowed, by default 1), so that the API server judges the
// field as a Volcano that has it does.
func withNetworkTopology(crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		if crd.GetName() != volcanoPodGroups {
			continue
		}
		versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
		if err != nil {
			return err
		}
		for i, v := range versions {
			version, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: spec.versions[%d] is no object", volcanoPodGroups, i)
			}
			path := []string{"schema", "openAPIV3Schema", "properties", "spec", "properties"}
			properties, found, err := unstructured.NestedMap(version, path...)
			if err != nil || !found {
				return fmt.Errorf("%s: spec.versions[%d] has no spec properties: %v", volcanoPodGroups, i, err)
			}
			properties["networkTopology"] = map[string]any{
				"type": "object",
				"properties": map[string]any{
					"mode":               map[string]any{"type": "string", "enum": []any{"hard", "soft"}, "default": "hard"},
					"highestTierAllowed": map[string]any{"type": "integer", "default": int64(1)},
				},
			}
			if err := unstructured.SetNestedMap(version, properties, path...); err != nil {
				return err
			}
			versions[i] = version
		}
		if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
			return err
		}
		return nil
	}
	return fmt.Errorf("no CRD %s among the gang schedulers'", volcanoPodGroups)
}
