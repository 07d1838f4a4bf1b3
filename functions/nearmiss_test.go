package functions

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/test/testtool"
)

// Each near miss names the apiVersion and kind it most likely meant.
func TestNearMissesNameWhatTheyMeant(t *testing.T) {
	for _, c := range []struct{ apiVersion, kind, meant string }{
		// Seen in real manifests: a group under another domain, a version
		// that does not exist, a kind in another case.
		{"kubeflow.com/v2beta1", "MPIJob", "kubeflow.org/v2beta1 MPIJob"},
		{"kubeflow.org/v2", "MPIJob", "kubeflow.org/v2beta1 MPIJob"},
		{"kubeflow.org/v2beta1", "MpiJob", "kubeflow.org/v2beta1 MPIJob"},
		{"kubeflow.org/v1", "PytorchJob", "kubeflow.org/v1 PyTorchJob"},
		{"trainer.kubeflow.org/v1", "TrainJob", "trainer.kubeflow.org/v1alpha1 TrainJob"},
		// Case, and a couple of edits.
		{"kubeflow.org/v1", "pytorchjob", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.org/v1", "PyTorchJobs", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.org/v1", "TorchJob", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.org/v2beta1", "MPIJobs", "kubeflow.org/v2beta1 MPIJob"},
		{"Kubeflow.org/v1", "PyTorchJob", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.og/v1", "PyTorchJob", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.org/V1", "PyTorchJob", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.org/v1beta2", "PyTorchJob", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.org/v1alpha3", "MPIJob", "kubeflow.org/v1alpha1 MPIJob"},
		{"kubeflow.org/v3", "MPIJob", "kubeflow.org/v2beta1 MPIJob"},
		// A group left out, or a version.
		{"v1", "PyTorchJob", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.org", "MPIJob", "kubeflow.org/v2beta1 MPIJob"},
		// Another group of the same project: training-operator's label
		// domain, or Trainer's kind under the older group.
		{"training.kubeflow.org/v1", "PyTorchJob", "kubeflow.org/v1 PyTorchJob"},
		{"kubeflow.org/v1", "TrainJob", "trainer.kubeflow.org/v1alpha1 TrainJob"},
		{"kubeflow.org/v2", "TrainJob", "trainer.kubeflow.org/v1alpha1 TrainJob"},
		// Runtimes, DIJobs and trainfn's own configuration.
		{"trainer.kubeflow.org/v1", "ClusterTrainingRuntime", "trainer.kubeflow.org/v1alpha1 ClusterTrainingRuntime"},
		{"trainer.kubeflow.org/v1alpha1", "TrainingRunTime", "trainer.kubeflow.org/v1alpha1 TrainingRuntime"},
		{"diengine.opendilab.org/v1alpha1", "DIJob", "diengine.opendilab.org/v2alpha1 DIJob"},
		{"diengine.opendilab.org/v2alpha1", "DiJob", "diengine.opendilab.org/v2alpha1 DIJob"},
		{"fn.trainfn.dev/v1", "TrainFn", "fn.trainfn.dev/v1alpha1 TrainFn"},
	} {
		meant, ok := closest(schemas.Kind{APIVersion: c.apiVersion, Kind: c.kind})
		if assert.True(t, ok, "%s %s", c.apiVersion, c.kind) {
			assert.Equal(t, c.meant, meant.String(), "%s %s", c.apiVersion, c.kind)
		}
	}
}

// Kinds that are not near misses: the kinds trainfn reads, the operators'
// kinds it does not render (some a couple of edits from one it does),
// other kinds of Kubeflow's group, other projects' job kinds of the same
// names, and the objects every repository holds.
func TestNotNearMisses(t *testing.T) {
	for _, k := range readKinds {
		assert.False(t, isNearMiss(k.APIVersion, k.Kind), k.String())
	}
	for _, kind := range operatorKinds {
		assert.False(t, isNearMiss("kubeflow.org/v1", kind), kind)
		assert.True(t, PassesThrough("kubeflow.org/v1", kind), "%s passes through, with a warning", kind)
	}
	for _, c := range []struct{ apiVersion, kind string }{
		{"kubeflow.org/v1", "Notebook"},
		{"kubeflow.org/v1", "Profile"},
		{"kubeflow.org/v1alpha1", "PodDefault"},
		{"kubeflow.org/v1beta1", "Experiment"},
		{"kubeflow.org/v1beta1", "Trial"},
		{"kubeflow.org/v1beta1", "ScheduledWorkflow"},
		{"diengine.opendilab.org/v1alpha1", "AggregatorConfig"},
		// KubeDL's job kinds share training-operator's names.
		{"training.kubedl.io/v1alpha1", "PyTorchJob"},
		{"training.kubedl.io/v1alpha1", "MPIJob"},
		{"training.kubedl.io/v1alpha1", "TFJob"},
		{"batch.volcano.sh/v1alpha1", "Job"},
		{"jobset.x-k8s.io/v1alpha2", "JobSet"},
		{"kueue.x-k8s.io/v1beta1", "Workload"},
		{"scheduling.x-k8s.io/v1alpha1", "PodGroup"},
		{"scheduling.volcano.sh/v1beta1", "PodGroup"},
		{"batch/v1", "Job"},
		{"apps/v1", "Deployment"},
		{"v1", "ConfigMap"},
		{"v1", "Service"},
		{"v1", "List"},
		{"kustomize.config.k8s.io/v1beta1", "Kustomization"},
		{"config.kubernetes.io/v1", "ResourceList"},
	} {
		assert.False(t, isNearMiss(c.apiVersion, c.kind), "%s %s", c.apiVersion, c.kind)
	}
}

// No document that users write today, nor any the tests render, is a near
// miss: the compatibility corpus of the operators' own manifests, every
// golden case's input and config, and every example.
func TestNoRealManifestIsANearMiss(t *testing.T) {
	var files []string
	collect := func(root string) {
		require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				files = append(files, path)
			}
			return err
		}))
	}
	collect(testtool.UpstreamCorpus(t))
	collect(filepath.Join("..", "examples"))
	for _, dir := range testtool.GoldenDirs(t) {
		files = append(files, filepath.Join(dir, "input.yaml"))
		if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
			files = append(files, filepath.Join(dir, "config.yaml"))
		}
	}
	checked := 0
	for _, file := range files {
		if strings.Contains(file, "error-near-misses") {
			continue // the near misses themselves
		}
		docs, _, err := Read([]string{file}, nil)
		require.NoError(t, err)
		for _, doc := range docs {
			kind := kindOf(doc.Node)
			assert.False(t, isNearMiss(kind.APIVersion, kind.Kind), "%s: %s", where(doc), kind)
			checked++
		}
	}
	assert.Greater(t, checked, 300, "the corpus, the golden cases and the examples were read")
}

// A function config with a typo, a generator's job spec or a TrainFn, is
// refused as an item would be, naming what it meant.
func TestNearMissFunctionConfig(t *testing.T) {
	for config, says := range map[string]string{
		"{apiVersion: kubeflow.org/v2beta1, kind: MpiJob, metadata: {name: pi}, spec: {}}": `MpiJob pi: kind: Invalid value: "MpiJob": kinds are case-sensitive (did you mean "MPIJob"?)`,
		"{apiVersion: fn.trainfn.dev/v1, kind: TrainFn, metadata: {name: c}, spec: {}}":    `TrainFn c: apiVersion: Invalid value: "fn.trainfn.dev/v1": trainfn reads TrainFn of fn.trainfn.dev/v1alpha1 (did you mean "fn.trainfn.dev/v1alpha1"?)`,
	} {
		rl := &framework.ResourceList{FunctionConfig: yaml.MustParse(config)}
		err := Function{}.Process(rl)
		require.Error(t, err, config)
		assert.Equal(t, "error: "+says, err.Error())
		require.Len(t, rl.Results, 1)
		assert.Equal(t, framework.Error, rl.Results[0].Severity)
	}
}
