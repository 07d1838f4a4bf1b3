package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/functions/functionstest"
	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/schemas"
)

// kueueQueueLabel is how Kueue's docs queue an MPIJob, a PyTorchJob or a
// TrainJob (https://kueue.sigs.k8s.io/docs/tasks/run/kubeflow/mpijobs/).
const kueueQueueLabel = "kueue.x-k8s.io/queue-name"

// A job of every kind and version labelled with Kueue's queue, and nothing
// else, renders exactly as with Kueue chosen in trainfn's function config
// and that queue: one pod group, or, for a job resized at run time, its
// Jobs queued one by one and its workers an elastic Job; the label itself
// is on no rendered object Kueue would admit on its own.
func TestKueuesQueueLabelAloneRendersAsKueueChosen(t *testing.T) {
	for _, c := range []struct {
		dir     string
		resized bool
	}{
		{dir: "mpijob/testdata/v1alpha1/v1alpha1-launcher-command"},
		{dir: "mpijob/testdata/v1alpha2/v1alpha2-run-policy"},
		{dir: "mpijob/testdata/v1/training-operator-mpi-tensorflow-mnist"},
		{dir: "mpijob/testdata/v1/mpijob-elastic", resized: true},
		{dir: "mpijob/testdata/v2beta1/mpi-operator-pi"},
		{dir: "pytorchjob/testdata/v1/training-operator-pytorch-simple"},
		{dir: "pytorchjob/testdata/v1/pytorch-elastic-with-master"},
		{dir: "pytorchjob/testdata/v1/pytorch-elastic-scaled", resized: true},
		{dir: "dijob/testdata/v2alpha1/di-orchestrator-head-dijob-serial"},
		{dir: "trainjob/testdata/v1alpha1/torch-distributed"},
		{dir: "trainjob/testdata/v1alpha1/gang-kueue"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			labelled := writeCase(t, c.dir, func(job *yaml.RNode) {
				labels := job.GetLabels()
				if labels == nil {
					labels = map[string]string{}
				}
				labels[kueueQueueLabel] = "user-queue"
				require.NoError(t, job.SetLabels(labels))
			}, "spec: {}")
			chosen := writeCase(t, c.dir, func(*yaml.RNode) {}, "spec: {gangScheduling: {scheduler: Kueue, queue: user-queue}}")
			got, gotDiags := functionstest.RunCase(t, labelled)
			want, wantDiags := functionstest.RunCase(t, chosen)
			require.NotEmpty(t, want)
			assert.Equal(t, want, got)
			assert.Equal(t, wantDiags, gotDiags)

			groups := map[string]bool{}
			nodes, err := kio.FromBytes([]byte(got))
			require.NoError(t, err)
			for _, o := range nodes {
				queued := o.GetLabels()[kueueQueueLabel] != ""
				if k := o.GetKind(); k != "Job" && k != "StatefulSet" {
					assert.False(t, queued, "%s %s carries the queue", k, o.GetName())
					continue
				}
				assert.Equal(t, c.resized, queued, "%s %s: queued as a Workload of its own", o.GetKind(), o.GetName())
				if g, _ := o.Pipe(yaml.Lookup("spec", "template", "metadata", "labels", "kueue.x-k8s.io/pod-group-name")); g != nil {
					groups[yaml.GetValue(g)] = true
				}
			}
			if !c.resized {
				assert.Len(t, groups, 1, "every pod of the job is in one pod group")
			}
		})
	}
}

// writeCase writes a golden case's input, its job changed, with a function
// config of that spec, to a folder of the test's own.
func writeCase(t *testing.T, dir string, change func(job *yaml.RNode), spec string) string {
	t.Helper()
	docs, err := functions.ReadDocuments([]string{filepath.Join(dir, "input.yaml")}, nil)
	require.NoError(t, err)
	var out bytes.Buffer
	for _, d := range docs {
		if _, ok := render.Lookup(schemas.Kind{APIVersion: d.Node.GetApiVersion(), Kind: d.Node.GetKind()}); ok {
			change(d.Node)
		}
		text, err := d.Node.String()
		require.NoError(t, err)
		out.WriteString("---\n" + text)
	}
	to := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(to, "input.yaml"), out.Bytes(), 0o644))
	config := "apiVersion: fn.trainfn.dev/v1alpha1\nkind: TrainFn\nmetadata: {name: trainfn}\n" + spec + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(to, "config.yaml"), []byte(config), 0o644))
	return to
}

// Jobs Kueue admits one by one, as an elastic job's, carry the queue:
// Kueue manages them and resumes them on admission, so they stay
// suspended as the job asks, and nothing is said of it.
func TestKueueResumesTheJobsItAdmitsOneByOne(t *testing.T) {
	dir := writeCase(t, "mpijob/testdata/v1/mpijob-elastic", func(job *yaml.RNode) {
		require.NoError(t, job.SetLabels(map[string]string{kueueQueueLabel: "user-queue"}))
		require.NoError(t, job.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "runPolicy"), yaml.SetField("suspend", yaml.MustParse("true"))))
	}, "spec: {}")
	out, diags := functionstest.RunCase(t, dir)
	assert.NotContains(t, diags, "suspend")
	nodes, err := kio.FromBytes([]byte(out))
	require.NoError(t, err)
	jobs := 0
	for _, o := range nodes {
		if o.GetKind() == "Job" {
			jobs++
			suspend, err := o.Pipe(yaml.Lookup("spec", "suspend"))
			require.NoError(t, err)
			assert.Equal(t, "true", yaml.GetValue(suspend), "Job %s", o.GetName())
		}
	}
	assert.Equal(t, 2, jobs)
}
