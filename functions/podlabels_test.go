package functions

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestPodLabelsAreTheOperators renders a job of each operator version and
// reads the labels of each workload's pods: those the operator put on the
// pods of that role are there, with its values, as docs/labels.md's table
// of pod labels lists them.
func TestPodLabelsAreTheOperators(t *testing.T) {
	const (
		jobRole      = "training.kubeflow.org/job-role"
		replicaType  = "training.kubeflow.org/replica-type"
		replicaIndex = "training.kubeflow.org/replica-index"
	)
	for _, tc := range []struct {
		golden string
		// pods are the operator's labels by workload name.
		pods map[string]map[string]string
	}{
		{"mpi-operator-pi", map[string]map[string]string{
			"pi-launcher": {jobRole: "launcher"},
			"pi-worker":   {jobRole: "worker"},
		}},
		{"run-launcher-as-worker", map[string]map[string]string{
			"allreduce-launcher": {jobRole: "launcher", replicaIndex: "0"},
		}},
		{"training-operator-mpi-tensorflow-mnist", map[string]map[string]string{
			"tensorflow-mnist-launcher": {jobRole: "master", replicaType: "launcher"},
			"tensorflow-mnist-worker":   {replicaType: "worker"},
		}},
		{"mpi-operator-v1alpha2-tensorflow-benchmarks", map[string]map[string]string{
			"tensorflow-benchmarks-launcher": {"group_name": "kubeflow.org", "mpi_job_name": "tensorflow-benchmarks", "mpi_role_type": "launcher"},
			"tensorflow-benchmarks-worker":   {"group_name": "kubeflow.org", "mpi_job_name": "tensorflow-benchmarks", "mpi_role_type": "worker"},
		}},
		{"mpi-operator-v1alpha1-tensorflow-benchmarks-custom", map[string]map[string]string{
			"tensorflow-benchmarks-8-launcher": {"group_name": "kubeflow.org", "mpi_job_name": "tensorflow-benchmarks-8", "mpi_role_type": "launcher"},
			"tensorflow-benchmarks-8-worker":   {"group_name": "kubeflow.org", "mpi_job_name": "tensorflow-benchmarks-8", "mpi_role_type": "worker"},
		}},
		{"training-operator-pytorch-simple", map[string]map[string]string{
			"pytorch-simple-master":   {jobRole: "master", replicaType: "master", replicaIndex: "0"},
			"pytorch-simple-worker-0": {replicaType: "worker", replicaIndex: "0"},
		}},
		{"pytorch-workers-only", map[string]map[string]string{
			"workers-only-worker": {replicaType: "worker"},
		}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, diags := renderText(t, readCase(t, tc.golden))
			require.False(t, diags.HasErrors(), diags.Error())
			templates := podTemplateLabels(t, out)
			for workload, want := range tc.pods {
				got, ok := templates[workload]
				require.True(t, ok, "no workload %s among %v", workload, templates)
				for k, v := range want {
					assert.Equal(t, v, got[k], "%s's pods' label %s", workload, k)
				}
			}
		})
	}
}

// podTemplateLabels are the pod template labels of every Job and
// StatefulSet of a rendered stream, by workload name.
func podTemplateLabels(t *testing.T, stream string) map[string]map[string]string {
	t.Helper()
	docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(stream))
	require.NoError(t, err)
	out := map[string]map[string]string{}
	for _, d := range docs {
		if k := d.Node.GetKind(); k != "Job" && k != "StatefulSet" {
			continue
		}
		labels, err := d.Node.Pipe(yaml.Lookup("spec", "template", "metadata", "labels"))
		require.NoError(t, err)
		m := map[string]string{}
		if labels != nil {
			require.NoError(t, labels.YNode().Decode(&m))
		}
		out[d.Node.GetName()] = m
	}
	return out
}
