package oracle

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestSchemasHaveTrainersFields holds trainfn's schemas of the three kinds
// to the fields of Trainer v2.3.0's own CRDs (manifests/base/crds of its
// module): level by level from spec, each object's fields must be the
// same on both sides, down to the Kubernetes types both embed, which
// trainfn takes from the API server's own schema. trainfn's schemas are
// written by hand from the CRDs; this is what keeps them the CRDs' fields.
func TestSchemasHaveTrainersFields(t *testing.T) {
	crds := filepath.Join(moduleDir(t, "github.com/kubeflow/trainer/v2"), "manifests", "base", "crds")
	out, err := exec.Command(trainfn, "schema", "-f", "openapi", "TrainJob", "TrainingRuntime", "ClusterTrainingRuntime").Output()
	if err != nil {
		t.Fatalf("trainfn schema: %v", err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	ours := doc.Components.Schemas
	compared := 0
	for _, kind := range []string{"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"} {
		t.Run(kind, func(t *testing.T) {
			theirs := crdSpec(t, filepath.Join(crds, "trainer.kubeflow.org_"+strings.ToLower(kind)+"s.yaml"))
			root, ok := ours["org.kubeflow.trainer.v1alpha1."+kind]
			if !ok {
				t.Fatalf("trainfn's schema has no %s", kind)
			}
			w := walker{ours: ours}
			w.compare("spec", theirs, property(root, "spec"))
			compared += w.compared
			for _, d := range w.diffs {
				t.Error(d)
			}
		})
	}
	// The walk must have reached the runtimes' JobSet and the patches'
	// pod fields, or it compared next to nothing.
	if compared < 100 {
		t.Errorf("only %d fields compared", compared)
	}
}

// newerKubernetes are the fields of Kubernetes' own types, inlined where
// trainfn's schema narrows them, that the pinned API server's types have
// and the older ones Trainer v2.3.0's CRDs embed have not. Kubernetes'
// types are the API server's throughout trainfn's schemas: the Jobs it
// renders go to that server, not to Trainer's.
var newerKubernetes = map[string]bool{
	"spec.template.spec.replicatedJobs[].template.spec.scheduling": true, // JobSpec's workload scheduling, after Kubernetes 1.34
}

// walker compares a CRD's schema with trainfn's OpenAPI, resolving
// trainfn's references, and stops at Kubernetes' own types.
type walker struct {
	ours     map[string]map[string]any
	diffs    []string
	compared int
}

func (w *walker) compare(at string, theirs, ours map[string]any) {
	ours, k8s := w.resolve(ours)
	if k8s || ours == nil || theirs == nil {
		return
	}
	theirFields, ourFields := fields(theirs), w.fields(ours)
	for _, name := range sortedKeys(theirFields) {
		w.compared++
		mine, ok := ourFields[name]
		if !ok {
			w.diffs = append(w.diffs, at+"."+name+": Trainer's CRD has it, trainfn's schema has not")
			continue
		}
		w.compare(at+"."+name, theirFields[name], mine)
	}
	for _, name := range sortedKeys(ourFields) {
		if _, ok := theirFields[name]; !ok && !newerKubernetes[at+"."+name] {
			w.diffs = append(w.diffs, at+"."+name+": trainfn's schema has it, Trainer's CRD has not")
		}
	}
	if items, ok := theirs["items"].(map[string]any); ok {
		if mine, ok := w.items(ours); ok {
			w.compare(at+"[]", items, mine)
		} else {
			w.diffs = append(w.diffs, at+": a list in Trainer's CRD, not in trainfn's schema")
		}
	}
	if values, ok := theirs["additionalProperties"].(map[string]any); ok {
		if mine, ok := ours["additionalProperties"].(map[string]any); ok {
			w.compare(at+"{}", values, mine)
		}
	}
}

// resolve follows a reference of trainfn's schema, alone or in allOf;
// k8s is true when it names one of Kubernetes' own types.
func (w *walker) resolve(s map[string]any) (map[string]any, bool) {
	for s != nil {
		ref, _ := s["$ref"].(string)
		if all, ok := s["allOf"].([]any); ok && len(all) == 1 && ref == "" {
			ref, _ = all[0].(map[string]any)["$ref"].(string)
		}
		if ref == "" {
			return s, false
		}
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		if strings.HasPrefix(name, "io.k8s.") {
			return nil, true
		}
		s = w.ours[name]
	}
	return nil, false
}

// fields are an object's properties in trainfn's schema, those of each
// alternative (oneOf, anyOf, allOf) included.
func (w *walker) fields(s map[string]any) map[string]map[string]any {
	out := fields(s)
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		alternatives, _ := s[key].([]any)
		for _, a := range alternatives {
			alt, _ := w.resolve(a.(map[string]any))
			for name, f := range w.fields(alt) {
				if _, ok := out[name]; !ok {
					out[name] = f
				}
			}
		}
	}
	return out
}

// items is a list's item schema in trainfn's, alternatives included.
func (w *walker) items(s map[string]any) (map[string]any, bool) {
	if items, ok := s["items"].(map[string]any); ok {
		return items, true
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		alternatives, _ := s[key].([]any)
		for _, a := range alternatives {
			if alt, _ := w.resolve(a.(map[string]any)); alt != nil {
				if items, ok := w.items(alt); ok {
					return items, true
				}
			}
		}
	}
	return nil, false
}

func fields(s map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	if s == nil {
		return out
	}
	props, _ := s["properties"].(map[string]any)
	for name, p := range props {
		out[name], _ = p.(map[string]any)
	}
	return out
}

func property(s map[string]any, name string) map[string]any {
	return fields(s)[name]
}

// crdVersion is a version of a CRD, with its schema.
type crdVersion struct {
	Name   string `json:"name"`
	Schema struct {
		OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
	} `json:"schema"`
}

// crdSpec is the spec schema of a CRD's v1alpha1 version.
func crdSpec(t *testing.T, file string) map[string]any {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []crdVersion `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(crd.Spec.Versions, func(v crdVersion) bool { return v.Name == "v1alpha1" })
	if i < 0 {
		t.Fatalf("%s has no v1alpha1", file)
	}
	return property(crd.Spec.Versions[i].Schema.OpenAPIV3Schema, "spec")
}

// moduleDir is where the module cache holds a module this one requires.
func moduleDir(t *testing.T, module string) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", module, err)
	}
	return strings.TrimSpace(string(out))
}
