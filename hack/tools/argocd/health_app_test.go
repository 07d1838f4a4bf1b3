package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/health"
)

// workload is one of a job's workloads in a live state of the corpus:
// ended is the reconciler's trainfn.dev/ended mark, "" before the end.
type workload struct {
	name, state, ended, cleanPodPolicy string
}

// TestApplicationHealthOfJobs is the Application's health of a job of each
// kind in each of its phases, with the shipped check and with Argo CD's own
// checks alone: a finished job is Healthy or Degraded with the check,
// never Suspended or Progressing, and before its end the check changes
// nothing.
func TestApplicationHealthOfJobs(t *testing.T) {
	corpus := readCorpus(t)
	builtIn, check := overridesOf(t, noCheck), overridesOf(t, checkPatch)
	const healthy, degraded, progressing, suspended = health.HealthStatusHealthy, health.HealthStatusDegraded, health.HealthStatusProgressing, health.HealthStatusSuspended
	for _, c := range []struct {
		kind, phase     string
		workloads       []workload
		want, wantAlone health.HealthStatusCode
	}{
		{"MPIJob", "Pending (queued by Kueue)", []workload{{"pi-launcher", "queued", "", "Running"}, {"pi-worker", "queued", "", "Running"}}, suspended, suspended},
		{"MPIJob", "Starting", []workload{{"pi-launcher", "created", "", "Running"}, {"pi-worker", "running", "", "Running"}}, progressing, progressing},
		{"MPIJob", "Running", []workload{{"pi-launcher", "running", "", "Running"}, {"pi-worker", "running", "", "Running"}}, progressing, progressing},
		{"MPIJob", "Restarting", []workload{{"pi-launcher", "running", "", "Running"}, {"pi-worker", "restarted", "", "Running"}}, progressing, progressing},
		{"MPIJob", "Succeeded (workers stopped themselves)", []workload{{"pi-launcher", "complete", "", "Running"}, {"pi-worker", "complete-by-success-policy", "Succeeded", "Running"}}, healthy, healthy},
		{"MPIJob", "Succeeded (workers stopped by the reconciler)", []workload{{"pi-launcher", "complete", "", "Running"}, {"pi-worker", "stopped", "Succeeded", "Running"}}, healthy, suspended},
		{"MPIJob", "Failed", []workload{{"pi-launcher", "failed", "", "Running"}, {"pi-worker", "stopped", "Failed", "Running"}}, degraded, degraded},
		{"PyTorchJob", "Pending (runPolicy.suspend)", []workload{{"mnist-master", "queued", "", "None"}, {"mnist-worker", "queued", "", "None"}}, suspended, suspended},
		{"PyTorchJob", "Running", []workload{{"mnist-master", "running", "", "Running"}, {"mnist-worker", "running", "", "Running"}}, progressing, progressing},
		{"PyTorchJob", "Running (admitted by Kueue)", []workload{{"mnist-master", "resumed", "", "Running"}, {"mnist-worker", "resumed", "", "Running"}}, progressing, healthy},
		{"PyTorchJob", "Succeeded", []workload{{"mnist-master", "complete", "", "Running"}, {"mnist-worker", "stopped", "Succeeded", "Running"}}, healthy, suspended},
		{"PyTorchJob", "Succeeded (cleanPodPolicy None)", []workload{{"mnist-master", "complete", "", "None"}, {"mnist-worker", "running", "Succeeded", "None"}}, healthy, progressing},
		{"PyTorchJob", "Succeeded (elastic, under Kueue)", []workload{{"mnist-master", "complete", "", "Running"}, {"mnist-worker", "resized-to-zero", "Succeeded", "Running"}}, healthy, healthy},
		{"PyTorchJob", "Succeeded (elastic, a StatefulSet)", []workload{{"mnist-master", "complete", "", "Running"}, {"mnist-worker", "statefulset-scaled-to-zero", "Succeeded", "Running"}}, healthy, healthy},
		{"PyTorchJob", "Running (elastic, a StatefulSet)", []workload{{"mnist-master", "running", "", "Running"}, {"mnist-worker", "statefulset-running", "", "Running"}}, progressing, progressing},
		{"PyTorchJob", "Failed", []workload{{"mnist-master", "failed", "", "Running"}, {"mnist-worker", "stopped", "Failed", "Running"}}, degraded, degraded},
		{"PyTorchJob", "Failed (elastic, a StatefulSet)", []workload{{"mnist-master", "failed", "", "Running"}, {"mnist-worker", "statefulset-scaled-to-zero", "Failed", "Running"}}, degraded, degraded},
		{"DIJob", "Running", []workload{{"cartpole-coordinator", "running", "", "Running"}, {"cartpole-collector", "running", "", "Running"}, {"cartpole-learner", "running", "", "Running"}}, progressing, progressing},
		{"DIJob", "Succeeded", []workload{{"cartpole-coordinator", "complete", "Succeeded", "Running"}, {"cartpole-collector", "complete", "Succeeded", "Running"}, {"cartpole-learner", "complete", "Succeeded", "Running"}}, healthy, healthy},
		{"DIJob", "Failed", []workload{{"cartpole-coordinator", "stopped", "Failed", "Running"}, {"cartpole-collector", "failed", "Failed", "Running"}, {"cartpole-learner", "stopped", "Failed", "Running"}}, degraded, degraded},
		{"TrainJob", "Running", []workload{{"deepspeed-launcher", "running", "", "Running"}, {"deepspeed-node", "running", "", "Running"}}, progressing, progressing},
		{"TrainJob", "Succeeded", []workload{{"deepspeed-launcher", "complete", "", "Running"}, {"deepspeed-node", "stopped", "Succeeded", "Running"}}, healthy, suspended},
		{"TrainJob", "Failed", []workload{{"deepspeed-launcher", "failed", "", "Running"}, {"deepspeed-node", "stopped", "Failed", "Running"}}, degraded, degraded},
	} {
		var objs []*unstructured.Unstructured
		for _, w := range c.workloads {
			obj := trainfnWorkload(corpus[w.state].live(t), c.kind, w.ended, w.cleanPodPolicy)
			obj.SetName(w.name)
			objs = append(objs, obj)
		}
		// Every job's Service (Argo CD: Healthy) and ConfigMap (no health).
		for _, doc := range []string{
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"j","namespace":"training"},"spec":{"clusterIP":"None"}}`,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j-config","namespace":"training"}}`,
		} {
			u := &unstructured.Unstructured{}
			assert.NoError(t, u.UnmarshalJSON([]byte(doc)))
			objs = append(objs, u)
		}
		assert.Equal(t, c.want, applicationHealth(objs, check).Status, "%s %s, with the check", c.kind, c.phase)
		assert.Equal(t, c.wantAlone, applicationHealth(objs, builtIn).Status, "%s %s, Argo CD's checks alone", c.kind, c.phase)
	}
}
