package progress_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/progress"
	"github.com/trainfn/trainfn/render/ynode"
	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/test/testtool"
)

// Every kind and version reports to its own path, as the API server names
// its resource; a TrainJob to Trainer's own.
func TestURLOfEveryKind(t *testing.T) {
	want := map[string]string{
		"kubeflow.org/v2beta1 MPIJob":            "/apis/kubeflow.org/v2beta1/namespaces/$(TRAINFN_NAMESPACE)/mpijobs/j/status",
		"kubeflow.org/v1 MPIJob":                 "/apis/kubeflow.org/v1/namespaces/$(TRAINFN_NAMESPACE)/mpijobs/j/status",
		"kubeflow.org/v1alpha1 MPIJob":           "/apis/kubeflow.org/v1alpha1/namespaces/$(TRAINFN_NAMESPACE)/mpijobs/j/status",
		"kubeflow.org/v1alpha2 MPIJob":           "/apis/kubeflow.org/v1alpha2/namespaces/$(TRAINFN_NAMESPACE)/mpijobs/j/status",
		"kubeflow.org/v1 PyTorchJob":             "/apis/kubeflow.org/v1/namespaces/$(TRAINFN_NAMESPACE)/pytorchjobs/j/status",
		"diengine.opendilab.org/v2alpha1 DIJob":  "/apis/diengine.opendilab.org/v2alpha1/namespaces/$(TRAINFN_NAMESPACE)/dijobs/j/status",
		"trainer.kubeflow.org/v1alpha1 TrainJob": "/apis/trainer.kubeflow.org/v1alpha1/namespaces/$(TRAINFN_NAMESPACE)/trainjobs/j/status",
	}
	var kinds []string
	for _, k := range render.Kinds() {
		kinds = append(kinds, k.APIVersion+" "+k.Kind.Kind)
		url, err := progress.URL("progress.example:8443", k.APIVersion, k.Kind.Kind, "j")
		require.NoError(t, err, "every kind trainfn renders reports somewhere")
		assert.Equal(t, "https://progress.example:8443"+want[k.APIVersion+" "+k.Kind.Kind], url, "%s %s", k.APIVersion, k.Kind.Kind)
	}
	for k := range want {
		assert.Contains(t, kinds, k, "a kind of the table trainfn no longer renders")
	}

	_, err := progress.URL("s:1", "v1", "MPIJob", "j")
	assert.ErrorContains(t, err, "names no group")
	_, err = progress.URL("s:1", "batch/v1", "Job", "j")
	assert.ErrorContains(t, err, "no progress path for the kind Job")
}

// Every golden case that renders renders with progress on, whatever it
// holds (init containers, sidecars, a runtime's templates, elastic
// workers, gang schedulers): every container of every workload gets the
// variables and the mount, every pod the volume, the job its ConfigMap.
// With every job's annotation "false", the output is the golden one, byte
// for byte: a job opted out is rendered as if progress did not exist.
func TestEveryGoldenCaseReports(t *testing.T) {
	for _, c := range testtool.GoldenCases(t) {
		expected, err := os.ReadFile(filepath.Join(c.Dir, "expected.yaml"))
		if err != nil || c.Config != nil || bytes.Contains(c.Input, []byte(handoff.Progress)) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			objects, jobs := renderWith(t, c, "")
			cas := 0
			for _, o := range objects {
				if o.GetKind() == "ConfigMap" && o.GetAnnotations()[handoff.ProgressCA] == "true" {
					cas++
					assert.Nil(t, o.Field("data"), "the reconciler fills the CA")
				}
				if spec := template(o); spec != nil {
					requireReports(t, o, spec)
				}
			}
			assert.Equal(t, jobs, cas, "every job has the ConfigMap of its CA")

			var out bytes.Buffer
			objects, _ = renderWith(t, c, "false")
			require.NoError(t, functions.WriteDocuments(&out, objects))
			assert.Equal(t, string(expected), out.String(), "a job opted out renders as without progress")
		})
	}
}

// renderWith renders a case with progress on in the function config, and
// each job's annotation set to optOut unless it is empty; jobs are how
// many jobs it has.
func renderWith(t *testing.T, c testtool.GoldenCase, optOut string) (objects []*yaml.RNode, jobs int) {
	t.Helper()
	docs, err := functions.ReadDocuments([]string{filepath.Join(c.Dir, "input.yaml")}, nil)
	require.NoError(t, err)
	for _, d := range docs {
		kind := schemas.Kind{APIVersion: d.Node.GetApiVersion(), Kind: d.Node.GetKind()}
		if _, ok := render.Lookup(kind); !ok {
			continue
		}
		jobs++
		if optOut != "" {
			require.NoError(t, d.Node.PipeE(yaml.SetAnnotation(handoff.Progress, optOut)))
		}
	}
	config := yaml.MustParse("apiVersion: fn.trainfn.dev/v1alpha1\nkind: TrainFn\nmetadata: {name: trainfn}\nspec: {progress: true}\n")
	objects, diags := functions.Expand(append([]functions.Document{{Node: config}}, docs...))
	require.False(t, diags.HasErrors(), "%v", diags)
	return objects, jobs
}

// requireReports checks a workload's pod template.
func requireReports(t *testing.T, o *yaml.RNode, spec *yaml.Node) {
	t.Helper()
	name := o.GetKind() + " " + o.GetName()
	volumes := ynode.Get(spec, "volumes")
	require.NotNil(t, volumes, name)
	assert.Equal(t, 1, count(volumes, "name", progress.VolumeName), "%s has the volume once", name)
	var containers []*yaml.Node
	for _, list := range []string{"initContainers", "containers"} {
		if seq := ynode.Get(spec, list); seq != nil {
			containers = append(containers, seq.Content...)
		}
	}
	require.NotEmpty(t, containers, name)
	for _, c := range containers {
		what := name + " container " + ynode.ScalarValue(ynode.Get(c, "name"))
		env := ynode.Get(c, "env")
		require.NotNil(t, env, what)
		for _, v := range []string{progress.URLVariable, progress.CACertVariable, progress.TokenVariable} {
			assert.Equal(t, 1, count(env, "name", v), "%s sets %s once", what, v)
		}
		names := make([]string, len(env.Content))
		for i, e := range env.Content {
			names[i] = ynode.ScalarValue(ynode.Get(e, "name"))
		}
		ns, url := slices.Index(names, progress.NamespaceVariable), slices.Index(names, progress.URLVariable)
		assert.True(t, ns >= 0 && ns < url, "%s: Kubernetes substitutes $(%s) of a variable defined before the URL: %v", what, progress.NamespaceVariable, names)
		assert.Equal(t, 1, count(ynode.Get(c, "volumeMounts"), "mountPath", progress.MountPath), "%s mounts the volume once", what)
	}
}

// template is the pod spec of a workload, nil for another object.
func template(o *yaml.RNode) *yaml.Node {
	if o.GetKind() != "Job" && o.GetKind() != "StatefulSet" {
		return nil
	}
	return ynode.Get(ynode.Get(ynode.Get(o.YNode(), "spec"), "template"), "spec")
}

func count(seq *yaml.Node, field, value string) int {
	if seq == nil {
		return 0
	}
	n := 0
	for _, item := range seq.Content {
		if ynode.ScalarValue(ynode.Get(item, field)) == value {
			n++
		}
	}
	return n
}
