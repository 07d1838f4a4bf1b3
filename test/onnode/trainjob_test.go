//go:build e2e

package onnode

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTrainJobRunsToCompletion runs a TrainJob of Trainer's shipped
// torch-distributed runtime, rendered at build time, with neither Trainer
// nor JobSet in the cluster: both nodes' torchrun form one world from the
// PET_* variables and reach gloo's all-reduce.
func TestTrainJobRunsToCompletion(t *testing.T) {
	t.Parallel()
	s := submit(t, []string{"testdata/trainjob-torch.yaml", "../../examples/trainer/runtimes/torch_distributed.yaml"}, nil)
	jobs, err := kube.Client.BatchV1().Jobs(s.ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, jobs.Items, 1, "the runtime's one replicated job")
	s.succeed(jobs.Items[0].Name, jobTimeout)
	out := s.logs("training.kubeflow.org/job-name=trainjob-torch", "")
	t.Logf("the pods printed:\n%s", out)
	checkAllReduce(t, out, 2, 2)
	assert.Eventually(t, func() bool { return argoHealth(t, s, "trainjob-torch") == "Healthy" }, time.Minute, time.Second, "a succeeded TrainJob, in Argo CD")
}

// TestTrainJobRunsMPI runs mpirun to completion in a TrainJob of Trainer's
// shipped deepspeed-distributed runtime, its image swapped for a CPU image
// of ours (mpi-operator's pi): with Open MPI over SSH, as Trainer runs it;
// with MPICH, which Trainer refuses (run again while MPICH 4.0.2 deadlocks
// in MPI_Finalize, as TestMPIJobsRunToCompletion does); and with both in
// trainfn's KubectlExec and Rsh launch modes, which Trainer has not.
// The launcher is a node too: two nodes of two slots. The launcher waits
// for the nodes to be ready (the runtime's dependsOn), the reconciler
// creates the SSH Secret when the pods mount it, and when the launcher
// ends it stops the nodes, as JobSet does.
func TestTrainJobRunsMPI(t *testing.T) {
	shipped, err := os.ReadFile("../../examples/trainer/runtimes/deepspeed_distributed.yaml")
	require.NoError(t, err)
	for _, tt := range []struct {
		name, impl, image string
		// mode is the job's launch mode annotation, if any; root has the
		// runtime's pods run as root, as rshd must.
		mode string
		root bool
	}{
		{name: "tj-openmpi", impl: "OpenMPI", image: "mpioperator/mpi-pi:openmpi"},
		{name: "tj-mpich", impl: "MPICH", image: "mpioperator/mpi-pi:mpich"},
		{name: "tj-exec", impl: "OpenMPI", image: "mpioperator/mpi-pi:openmpi", mode: "KubectlExec"},
		{name: "tj-rsh", impl: "OpenMPI", image: "mpioperator/mpi-pi:openmpi", mode: "Rsh", root: true},
		{name: "tj-mpich-exec", impl: "MPICH", image: "mpioperator/mpi-pi:mpich", mode: "KubectlExec"},
		{name: "tj-mpich-rsh", impl: "MPICH", image: "mpioperator/mpi-pi:mpich", mode: "Rsh", root: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runtime := strings.ReplaceAll(string(shipped), "ghcr.io/kubeflow/trainer/deepspeed-runtime", tt.image)
			runtime = strings.Replace(runtime, "mpiImplementation: OpenMPI", "mpiImplementation: "+tt.impl, 1)
			command := `[mpirun, -n, "4", /home/mpiuser/pi]`
			if tt.root {
				runtime = strings.ReplaceAll(runtime, "runAsUser: 1000", "runAsUser: 0")
				if tt.impl == "OpenMPI" {
					command = `[mpirun, --allow-run-as-root, -n, "4", /home/mpiuser/pi]`
				}
			}
			annotations := ""
			if tt.mode != "" {
				annotations = "\n  annotations:\n    trainfn.dev/mpi-launch-mode: " + tt.mode
			}
			job := writeFile(t, "trainjob.yaml", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: `+tt.name+annotations+`
spec:
  runtimeRef:
    name: deepspeed-distributed
  trainer:
    command: `+command+`
    numNodes: 2
    numProcPerNode: 2
`)
			manifests := []string{job, writeFile(t, "runtime.yaml", runtime)}
			if tt.mode == "KubectlExec" {
				manifests = append(manifests, writeFile(t, "trainfn.yaml", deliveryConfig()))
			}
			s := submit(t, manifests, nil)
			for run := 1; tt.impl == "MPICH" && !s.finalized(tt.name+"-launcher-0"); run++ {
				require.Less(t, run, mpichRuns, "MPICH's MPI_Finalize deadlocked in %d runs in a row", mpichRuns)
				s.abandon()
				s = submit(t, manifests, nil)
			}
			s.succeed(tt.name+"-launcher-0", jobTimeout)
			out := s.logs("batch.kubernetes.io/job-name="+tt.name+"-launcher-0", "")
			t.Logf("the launcher printed:\n%s", out)
			assert.Regexp(t, piLine, out)
			hosts := map[string]int{}
			for _, m := range rankLine.FindAllStringSubmatch(out, -1) {
				assert.Equal(t, "4", m[2], "the world's size")
				hosts[m[3]]++
			}
			assert.Equal(t, map[string]int{tt.name + "-node-0-0": 2, tt.name + "-launcher-0-0": 2}, hosts, "ranks per pod")
			// The nodes serve until stopped: the reconciler stops them
			// once the launcher succeeded.
			assert.Eventually(t, func() bool {
				pods, err := kube.Client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
					LabelSelector: "batch.kubernetes.io/job-name=" + tt.name + "-node-0"})
				if err != nil {
					return false
				}
				for _, p := range pods.Items {
					if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
						return false
					}
				}
				return true
			}, 2*time.Minute, time.Second, "the nodes' pods are stopped")
		})
	}
}

// TestTrainJobInitializerRunsFirst runs a runtime whose trainer depends on
// its dataset initializer being Complete, as Trainer's torchtune and
// data-cache runtimes do: the initializer, a stand-in that writes the
// TrainJob's storageUri to the shared claim, ends before the trainer's pod
// is let out of its scheduling gate, and the trainer reads the file.
func TestTrainJobInitializerRunsFirst(t *testing.T) {
	t.Parallel()
	// The claim binds to a volume of this machine's, as no provisioner runs.
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	pv := writeFile(t, "pv.yaml", `apiVersion: v1
kind: PersistentVolume
metadata:
  name: trainjob-initializer-`+strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))+`
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  hostPath: {path: `+dir+`}
`)
	job := writeFile(t, "trainjob.yaml", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj-init
spec:
  runtimeRef:
    name: dataset-first
  initializer:
    dataset:
      storageUri: hf://example/alpaca
  trainer:
    command: [sh, -c, 'cat /workspace/dataset/uri; date +%s.%N > /workspace/started']
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: dataset-first
spec:
  template:
    spec:
      volumeClaimPolicies:
      - templates:
        - metadata: {name: initializer}
          spec:
            accessModes: [ReadWriteOnce]
            resources: {requests: {storage: 1Gi}}
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}
          spec:
            template:
              spec:
                containers:
                - name: dataset-initializer
                  image: mpioperator/mpi-pi:openmpi
                  command: [sh, -c, 'sleep 5; mkdir -p /workspace/dataset; echo "$STORAGE_URI" > /workspace/dataset/uri; date +%s.%N > /workspace/initialized']
                  volumeMounts: [{name: initializer, mountPath: /workspace}]
      - name: node
        dependsOn: [{name: dataset-initializer, status: Complete}]
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: mpioperator/mpi-pi:openmpi
                  volumeMounts: [{name: initializer, mountPath: /workspace}]
`)
	s := submit(t, []string{job}, nil)
	s.kubectl(nil, "apply", "-f", pv)
	t.Cleanup(func() { _ = s.tryKubectl(nil, "delete", "-f", pv, "--wait=false") })
	s.succeed("tj-init-dataset-initializer-0", jobTimeout)
	s.succeed("tj-init-node-0", jobTimeout)
	out := s.logs("batch.kubernetes.io/job-name=tj-init-node-0", "")
	assert.Contains(t, out, "hf://example/alpaca", "the trainer reads what the initializer wrote")
	initialized, err := os.ReadFile(dir + "/initialized")
	require.NoError(t, err)
	started, err := os.ReadFile(dir + "/started")
	require.NoError(t, err)
	assert.Less(t, strings.TrimSpace(string(initialized)), strings.TrimSpace(string(started)), "the initializer ended before the trainer started")
}
