package functions

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kptItems are items as kpt passes a package: every one with its file and
// its place in the file.
const kptItems = `- apiVersion: kubeflow.org/v1
  kind: PyTorchJob
  metadata:
    name: mnist
    annotations:
      internal.config.kubernetes.io/path: jobs.yaml
      internal.config.kubernetes.io/index: '0'
  spec:
    pytorchReplicaSpecs:
      Worker:
        replicas: 1
        template:
          spec:
            containers:
            - name: pytorch
              image: pytorch:1
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: after
    annotations:
      internal.config.kubernetes.io/path: jobs.yaml
      internal.config.kubernetes.io/index: '1'
- apiVersion: fn.trainfn.dev/v1alpha1
  kind: TrainFn
  metadata:
    name: trainfn
    annotations:
      config.kubernetes.io/local-config: "true"
      internal.config.kubernetes.io/path: trainfn.yaml
      internal.config.kubernetes.io/index: '0'
`

func kptRun(t *testing.T, config string) (*framework.ResourceList, Diagnostics) {
	t.Helper()
	items, err := yaml.Parse(kptItems)
	require.NoError(t, err)
	rl := &framework.ResourceList{}
	for _, n := range items.Content() {
		rl.Items = append(rl.Items, yaml.NewRNode(n))
	}
	if config != "" {
		rl.FunctionConfig = yaml.MustParse(config)
	}
	return rl, Function{}.Diagnose(rl)
}

func TestKptItemsStayInTheirFiles(t *testing.T) {
	rl, diags := kptRun(t, "")
	require.False(t, diags.HasErrors(), diags.Error())

	placed := map[string][]string{}
	for _, item := range rl.Items {
		path, index, err := kioutil.GetFileAnnotations(item)
		require.NoError(t, err)
		placed[path] = append(placed[path], index+" "+item.GetKind()+"/"+item.GetName())
	}
	assert.ElementsMatch(t, []string{"0 Service/mnist-pytorch", "1 Service/mnist-worker-0", "2 Job/mnist-worker", "3 ConfigMap/after"}, placed["jobs.yaml"],
		"the job's objects take its place in its file, and what came after it follows them")
	assert.Equal(t, []string{"0 TrainFn/trainfn"}, placed["trainfn.yaml"], "a configuration file of the package stays")
}

func TestUnreadFunctionConfigIsRefused(t *testing.T) {
	rl, diags := kptRun(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata:\n  launchMode: KubectlExec\n")
	require.True(t, diags.HasErrors())
	assert.Contains(t, diags.Error(), "the function config is a v1 ConfigMap: trainfn reads its options from a fn.trainfn.dev/v1alpha1 TrainFn")
	assert.Len(t, rl.Items, 3, "the items are left as they came")
	assert.Equal(t, "PyTorchJob", rl.Items[0].GetKind())
}

func TestKptsEmptyConfigSaysNothing(t *testing.T) {
	_, diags := kptRun(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\n")
	assert.False(t, diags.HasErrors(), diags.Error())
}

func TestAConfigSharingAFileKeepsItsPlace(t *testing.T) {
	items, err := yaml.Parse(strings.ReplaceAll(kptItems, "path: trainfn.yaml\n      internal.config.kubernetes.io/index: '0'", "path: jobs.yaml\n      internal.config.kubernetes.io/index: '2'"))
	require.NoError(t, err)
	rl := &framework.ResourceList{}
	for _, n := range items.Content() {
		rl.Items = append(rl.Items, yaml.NewRNode(n))
	}
	diags := Function{}.Diagnose(rl)
	require.False(t, diags.HasErrors(), diags.Error())
	indexes := map[string]string{}
	for _, item := range rl.Items {
		path, index, err := kioutil.GetFileAnnotations(item)
		require.NoError(t, err)
		require.Equal(t, "jobs.yaml", path)
		require.NotContains(t, indexes, index, "%s and %s share an index", indexes[index], item.GetName())
		indexes[index] = item.GetKind() + "/" + item.GetName()
	}
	assert.Equal(t, "TrainFn/trainfn", indexes["4"], "the configuration follows what came before it")
}

func TestAConfigWithoutAFileIsConsumed(t *testing.T) {
	config := "apiVersion: fn.trainfn.dev/v1alpha1\nkind: TrainFn\nmetadata:\n  name: trainfn\n"
	out, err := functionRun(t, strings.Replace(resourceList, "SLOTS", "slotsPerWorker: 2", 1)+"- "+strings.ReplaceAll(strings.TrimSpace(config), "\n", "\n  ")+"\n")
	require.NoError(t, err)
	assert.NotContains(t, out, "kind: TrainFn", "kustomize passes no path: a TrainFn among its resources is not output")
}
