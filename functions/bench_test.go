package functions

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/test/jobstream"
)

// BenchmarkExpandJob validates, renders and stamps one job of each kind,
// its schemas already built: what each further job in a stream costs.
func BenchmarkExpandJob(b *testing.B) {
	docs, err := ReadDocuments([]string{Stdin}, bytes.NewReader(jobstream.Mixed(3)))
	if err != nil {
		b.Fatal(err)
	}
	validator := schemas.NewValidator()
	for _, doc := range docs {
		b.Run(doc.Node.GetKind()+"/"+doc.Node.GetApiVersion(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, diags := expandOne(doc, options.Default, validator); diags.HasErrors() {
					b.Fatal(diags)
				}
			}
		})
	}
}

// BenchmarkRenderStream reads, expands and writes streams of mixed jobs, as
// trainfn render does, without the process around it; the schemas are
// built by the first run.
func BenchmarkRenderStream(b *testing.B) {
	for _, n := range []int{1, 100} {
		stream := jobstream.Mixed(n)
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				renderStream(b, stream)
			}
		})
	}
}

// BenchmarkReplicaServices weighs what a Service per worker, as
// training-operator creates them, costs a PyTorchJob of 1,000 workers:
// rendered with them (replicaServices: true, the default) and without
// (false, the job's Service, and worker 0's for its rendezvous). Compare
// the two with benchstat -col /services.
func BenchmarkReplicaServices(b *testing.B) {
	const job = `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: big
spec:
  elasticPolicy:
    rdzvBackend: c10d
  pytorchReplicaSpecs:
    Worker:
      replicas: 1000
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/train:1
            command: [torchrun, train.py]
`
	for _, services := range []string{"false", "true"} {
		config := "apiVersion: fn.trainfn.dev/v1alpha1\nkind: TrainFn\nmetadata:\n  name: trainfn\nspec:\n  pytorch:\n    replicaServices: " + services + "\n"
		stream := []byte(config + "---\n" + job)
		b.Run("services="+map[string]string{"false": "job", "true": "per-replica"}[services], func(b *testing.B) {
			b.ReportAllocs()
			var objects int
			for b.Loop() {
				objects = renderStream(b, stream)
			}
			b.ReportMetric(float64(objects), "objects/op")
		})
	}
}

// renderStream reads, expands and writes a stream, as trainfn render does,
// and counts the objects written.
func renderStream(b *testing.B, stream []byte) int {
	docs, err := ReadDocuments([]string{Stdin}, bytes.NewReader(stream))
	if err != nil {
		b.Fatal(err)
	}
	out, diags := Expand(docs)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	if err := WriteDocuments(io.Discard, out); err != nil {
		b.Fatal(err)
	}
	return len(out)
}

// BenchmarkTrainJobAgainstMPIJob weighs a TrainJob against an MPIJob of
// the same size: 64 nodes of 8 slots, an MPI launcher and sshd on every
// node. The TrainJob's stream holds its runtime, Trainer's
// deepspeed-distributed unchanged but for a launcher that is no node, as
// an MPIJob's is not, which the render validates and resolves too.
// Compare the two with benchstat -col /kind.
func BenchmarkTrainJobAgainstMPIJob(b *testing.B) {
	runtime, err := os.ReadFile("../examples/trainer/runtimes/deepspeed_distributed.yaml")
	if err != nil {
		b.Fatal(err)
	}
	streams := map[string]string{
		"MPIJob": `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: big
spec:
  slotsPerWorker: 8
  sshAuthMountPath: /home/mpiuser/.ssh
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: ghcr.io/kubeflow/trainer/deepspeed-runtime
            command: [mpirun, deepspeed, train.py]
    Worker:
      replicas: 64
      template:
        spec:
          containers:
          - name: worker
            image: ghcr.io/kubeflow/trainer/deepspeed-runtime
            command: [/usr/sbin/sshd, -De, -f, /home/mpiuser/.sshd_config]
`,
		"TrainJob": `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: big
spec:
  runtimeRef:
    name: deepspeed-distributed
  trainer:
    command: [mpirun, deepspeed, train.py]
    numNodes: 64
    numProcPerNode: 8
---
` + strings.Replace(string(runtime), "runLauncherAsNode: true", "runLauncherAsNode: false", 1),
	}
	for _, kind := range []string{"MPIJob", "TrainJob"} {
		b.Run("kind="+kind, func(b *testing.B) {
			b.ReportAllocs()
			var objects int
			for b.Loop() {
				objects = renderStream(b, []byte(streams[kind]))
			}
			b.ReportMetric(float64(objects), "objects/op")
		})
	}
}
