package jobdiff_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/functions/jobdiff"
)

const pi = `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  slotsPerWorker: 1
  runPolicy:
    ttlSecondsAfterFinished: 60
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: mpioperator/mpi-pi:openmpi
            command: [mpirun, -n, "2", /home/mpiuser/pi]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: mpioperator/mpi-pi:openmpi
`

const echo = `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: echo
  namespace: team-a
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: python:3.12
            command: [python, -c, "print(1)"]
`

func docs(t *testing.T, stream string) []functions.Document {
	t.Helper()
	d, err := functions.ReadDocuments([]string{functions.Stdin}, strings.NewReader(stream))
	require.NoError(t, err)
	return d
}

func lines(t *testing.T, old, revised string) []string {
	t.Helper()
	changes, err := jobdiff.Compare(docs(t, old), docs(t, revised))
	require.NoError(t, err)
	var out []string
	for _, c := range changes {
		out = append(out, c.String())
	}
	return out
}

func edit(s string, pairs ...string) string { return strings.NewReplacer(pairs...).Replace(s) }

func TestEachKindOfLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		want     []string
	}{
		{"the same specs", pi + "---\n" + echo, echo + "---\n" + pi, []string{
			"MPIJob pi: unchanged",
			"PyTorchJob team-a/echo: unchanged",
		}},
		{"a comment and key order", pi, "# the pi job\n" + edit(pi, "  slotsPerWorker: 1\n  runPolicy:\n    ttlSecondsAfterFinished: 60\n", "  runPolicy:\n    ttlSecondsAfterFinished: 60\n  slotsPerWorker: 1\n"), []string{
			"MPIJob pi: unchanged",
		}},
		{"labels, an annotation and the TTL", pi, edit(pi, "  name: pi\n", "  name: pi\n  labels: {cost-center: vision}\n  annotations: {owner: team-vision}\n", "ttlSecondsAfterFinished: 60", "ttlSecondsAfterFinished: 120"), []string{
			"MPIJob pi: updated in place (metadata.annotations, metadata.labels, spec.runPolicy.ttlSecondsAfterFinished)",
		}},
		{"a label edited", edit(pi, "  name: pi\n", "  name: pi\n  labels: {cost-center: vision, app.kubernetes.io/part-of: pi}\n"), edit(pi, "  name: pi\n", "  name: pi\n  labels: {cost-center: research, app.kubernetes.io/part-of: demo}\n"), []string{
			"MPIJob pi: updated in place (metadata.labels.cost-center, metadata.labels[app.kubernetes.io/part-of])",
		}},
		{"suspended", pi, edit(pi, "  runPolicy:\n", "  runPolicy:\n    suspend: true\n"), []string{
			"MPIJob pi: updated in place (spec.runPolicy.suspend)",
		}},
		{"a new image and a label", pi, edit(pi, "mpi-pi:openmpi\n            command", "mpi-pi:mpich\n            command", "  name: pi\n", "  name: pi\n  labels: {team: a}\n"), []string{
			"MPIJob pi: restarts (spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].image)",
		}},
		{"a third worker", pi, edit(pi, "replicas: 2", "replicas: 3"), []string{
			"MPIJob pi: restarts (spec.mpiReplicaSpecs.Worker.replicas)",
		}},
		{"a container more", echo, edit(echo, "            command: [python, -c, \"print(1)\"]\n", "            command: [python, -c, \"print(1)\"]\n          - name: sidecar\n            image: busybox\n"), []string{
			"PyTorchJob team-a/echo: restarts (spec.pytorchReplicaSpecs.Worker.template.spec.containers)",
		}},
		{"a Kueue label the pods carry", pi, edit(pi, "  name: pi\n", "  name: pi\n  labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: high}\n"), []string{
			"MPIJob pi: restarts (metadata.labels)",
		}},
		{"a job added and one removed", pi, echo, []string{
			"MPIJob pi: removed",
			"PyTorchJob team-a/echo: added",
		}},
		{"the same name in another namespace", echo, edit(echo, "namespace: team-a", "namespace: team-b"), []string{
			"PyTorchJob team-a/echo: removed",
			"PyTorchJob team-b/echo: added",
		}},
		{"a kind's newer version", edit(pi, "kubeflow.org/v2beta1", "kubeflow.org/v1"), pi, []string{
			"MPIJob pi: restarts (apiVersion)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, lines(t, tc.old, tc.new))
		})
	}
}

func TestAnErrorInEitherRevisionIsAllThereIs(t *testing.T) {
	broken := edit(pi, "slotsPerWorker: 1", "slotPerWorker: 1")
	for name, revisions := range map[string][2]string{"old": {broken, pi}, "new": {pi, broken}} {
		changes, err := jobdiff.Compare(docs(t, revisions[0]), docs(t, revisions[1]))
		var diags functions.Diagnostics
		require.ErrorAs(t, err, &diags, name)
		assert.Contains(t, diags.Error(), "spec.slotPerWorker", name)
		assert.Empty(t, changes, name)
	}
}

// rendered is what trainfn renders of specs, as kustomize build prints it.
func rendered(t *testing.T, specs string) string {
	t.Helper()
	objects, diags := functions.Expand(docs(t, specs))
	require.False(t, diags.HasErrors(), diags.Error())
	var out strings.Builder
	require.NoError(t, functions.WriteDocuments(&out, objects))
	return out.String()
}

// reversed is a stream's documents in the reverse order.
func reversed(t *testing.T, stream string) string {
	t.Helper()
	d := docs(t, stream)
	slices.Reverse(d)
	var out strings.Builder
	for _, doc := range d {
		out.WriteString("---\n" + doc.Node.MustString())
	}
	return out.String()
}

// A revision may be rendered output, as a kustomize or kpt pipeline that
// runs trainfn builds it: its objects are grouped by their job's labels,
// and the fields named are theirs.
func TestRenderedRevisions(t *testing.T) {
	relabelled := edit(pi, "  name: pi\n", "  name: pi\n  labels: {cost-center: vision}\n")
	for _, tc := range []struct {
		name     string
		old, new string
		want     []string
	}{
		{"the same output", rendered(t, pi+"---\n"+echo), rendered(t, echo+"---\n"+pi), []string{
			"MPIJob pi: unchanged",
			"PyTorchJob team-a/echo: unchanged",
		}},
		{"a new image", rendered(t, pi), rendered(t, edit(pi, "mpi-pi:openmpi\n            command", "mpi-pi:mpich\n            command")), []string{
			"MPIJob pi: restarts (Job pi-launcher spec.template.spec.containers[0].image)",
		}},
		{"a label", rendered(t, pi), rendered(t, relabelled), []string{
			"MPIJob pi: updated in place (ConfigMap pi-config metadata.labels.cost-center, Job pi-launcher metadata.labels.cost-center, Job pi-worker metadata.labels.cost-center, Service pi metadata.labels.cost-center)",
		}},
		{"a spec against its own output, in another order", pi, reversed(t, rendered(t, pi)), []string{"MPIJob pi: unchanged"}},
		{"a spec against another's output", pi, rendered(t, relabelled), []string{
			"MPIJob pi: updated in place (ConfigMap pi-config metadata.labels.cost-center, Job pi-launcher metadata.labels.cost-center, Job pi-worker metadata.labels.cost-center, Service pi metadata.labels.cost-center)",
		}},
		{"a job added", rendered(t, pi), rendered(t, pi+"---\n"+echo), []string{
			"MPIJob pi: unchanged",
			"PyTorchJob team-a/echo: added",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, lines(t, tc.old, tc.new))
		})
	}
}
