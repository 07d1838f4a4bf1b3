//go:build e2e

package onnode

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// lostJobTimeout bounds a job across a lost node: Kubernetes takes the node
// for lost after 50 s (node-monitor-grace-period), the pod garbage
// collector deletes its pods up to a minute after its Node is gone, and
// the worker is made again elsewhere.
const lostJobTimeout = 8 * time.Minute

// TestNodeLostUnderAWorker loses, while mpirun runs, the node of a worker
// that is not the launcher's, as a machine dies: its kubelet and
// containers killed at once, cut off the network. Then its Node is deleted
// once NotReady, as a cloud's node controller does; or, as on bare metal,
// the Node stays and an administrator taints it out of service. Nobody
// else steps in: the worker's pod is failed with DisruptionTarget, the
// workers' Job makes it again on the other node without counting a
// failure, and the launcher, whose mpirun failed while the worker was not
// there, runs it again in the same attempt once the worker answers. The
// job succeeds with nothing of its backoffLimit spent.
func TestNodeLostUnderAWorker(t *testing.T) {
	needNodes(t, 2)
	for _, how := range []string{nodeDeleted, outOfService} {
		t.Run(how, func(t *testing.T) {
			s, launcherNode := startLostJob(t)
			victim := otherNode(launcherNode)
			out := s.succeedsAfter(victim, loseNode(t, victim, how))
			assert.Contains(t, out, "a disruption, not the command", "mpirun did not fail when its worker's node went")
			assert.Equal(t, 1, s.launcherAttempts("pi-lost-launcher"), "the launcher's attempts: a lost node spends none")
			workers, err := kube.Client.BatchV1().Jobs(s.ns).Get(context.Background(), "pi-lost-worker", metav1.GetOptions{})
			require.NoError(t, err)
			assert.Zero(t, workers.Status.Failed, "the workers' failures: a lost node's pod counts as none")
		})
	}
}

// How a lost node's pods are let go: its Node deleted, as clouds do, or
// kept and tainted out of service, as an administrator of bare metal does
// (Kubernetes' non-graceful node shutdown).
const (
	nodeDeleted  = "node-deleted"
	outOfService = "out-of-service"
)

// TestNodeLostUnderTheLauncher loses the launcher's node, and a worker's
// with it, while mpirun runs: the launcher's Job makes the launcher again
// once its pod is gone, as it makes mpi-operator's, and the new attempt
// waits for the workers, one of them made again too, and succeeds.
func TestNodeLostUnderTheLauncher(t *testing.T) {
	needNodes(t, 2)
	s, launcherNode := startLostJob(t)
	s.succeedsAfter(launcherNode, loseNode(t, launcherNode, nodeDeleted))
	launcher, err := kube.Client.BatchV1().Jobs(s.ns).Get(context.Background(), "pi-lost-launcher", metav1.GetOptions{})
	require.NoError(t, err)
	assert.LessOrEqual(t, launcher.Status.Failed, int32(2), "the launcher's failures, within its backoffLimit")
}

// startLostJob submits pi-lost, its workers one a node, and returns once
// mpirun has started, with the launcher's node.
func startLostJob(t *testing.T) (*submission, string) {
	t.Helper()
	if !kube.Started() {
		t.Skip("the cluster is make node's: make node-stop loses its nodes")
	}
	s := submit(t, []string{"testdata/nodes/pi-lost.yaml"}, nil)
	placed := s.placement("training.kubeflow.org/job-name=pi-lost", 3, jobTimeout)
	s.mpirunStarts("pi-lost-launcher", 2, jobTimeout)
	time.Sleep(midRun)
	t.Logf("placed: %v", placed)
	return s, placed["pi-lost-launcher"]
}

// succeedsAfter requires pi-lost to succeed, pi printed by every rank,
// after the node was lost when given, and returns what its launcher
// printed.
func (s *submission) succeedsAfter(node string, lost time.Time) string {
	s.t.Helper()
	succeeded, _ := s.finish("pi-lost-launcher", lostJobTimeout)
	out := s.logs("batch.kubernetes.io/job-name=pi-lost-launcher", "")
	s.t.Logf("the launcher printed:\n%s", out)
	require.True(s.t, succeeded, "the job failed")
	s.t.Logf("node %s lost: the job succeeded %s later", node, time.Since(lost).Round(100*time.Millisecond))
	checkPi(s.t, out, "pi-lost", 2, 2, 0)
	return out
}

// otherNode is a node that is not the one given.
func otherNode(name string) string {
	for _, n := range nodeNames() {
		if n != name {
			return n
		}
	}
	return ""
}

// loseNode loses a node as its machine dies, lets its pods go as how
// says once it is NotReady, and brings it back when the test ends, for
// the tests after it. It returns when the node was lost.
func loseNode(t *testing.T, name, how string) time.Time {
	t.Helper()
	require.NotEmpty(t, name)
	lost := time.Now()
	require.NoError(t, kube.LoseMember(name))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		assert.NoError(t, kube.ReturnMember(ctx, name), "bringing %s back", name)
		if how == outOfService {
			assert.NoError(t, taint(ctx, name, false), "the node's repair done, its taint removed")
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if how == outOfService {
		require.NoError(t, kube.WaitLost(ctx, name))
		require.NoError(t, taint(ctx, name, true))
		t.Logf("node %s taken for lost and tainted out of service %s after it was lost", name, time.Since(lost).Round(100*time.Millisecond))
		return lost
	}
	require.NoError(t, kube.DeleteNode(ctx, name))
	t.Logf("node %s taken for lost and its Node deleted %s after it was lost", name, time.Since(lost).Round(100*time.Millisecond))
	return lost
}

// taint puts the out-of-service taint on a node, as kubectl taint does,
// or removes it; the node lifecycle controller updates the Node meanwhile.
func taint(ctx context.Context, name string, on bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := kube.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		outOfService := corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == outOfService.Key })
		if on {
			node.Spec.Taints = append(node.Spec.Taints, outOfService)
		}
		_, err = kube.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

// TestElasticJobAcrossNodeLoss loses the node of an elastic PyTorchJob's
// second worker, each worker on a node of its own: torchrun's agent on the
// first forms a world of one and trains on; the second worker, made again
// once its Node is gone, waits for a node to be free, and when the lost
// node returns it joins, and the agents form a world of two again.
func TestElasticJobAcrossNodeLoss(t *testing.T) {
	needNodes(t, 2)
	if !kube.Started() {
		t.Skip("the cluster is make node's: make node-stop loses its nodes")
	}
	const workers = "torch-nodes-elastic-worker"
	s := submit(t, []string{"testdata/nodes/torch-elastic.yaml"}, nil)
	placed := s.placement("training.kubeflow.org/job-name=torch-nodes-elastic", 2, jobTimeout)
	t.Logf("placed: %v", placed)
	s.formsWorld(workers, 2, 1, 3*time.Minute)
	victim := placed[workers+"-1"]
	require.NotEqual(t, placed[workers+"-0"], victim, "the workers share a node")

	lost := time.Now()
	require.NoError(t, kube.LoseMember(victim))
	returned := false
	t.Cleanup(func() {
		if !returned {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			assert.NoError(t, kube.ReturnMember(ctx, victim))
		}
	})
	s.formsWorld(workers, 1, 2, 3*time.Minute)
	t.Logf("node %s lost: the first worker formed a world of one %s later", victim, time.Since(lost).Round(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, kube.DeleteNode(ctx, victim))

	back := time.Now()
	require.NoError(t, kube.ReturnMember(ctx, victim))
	returned = true
	s.formsWorld(workers, 2, 3, 4*time.Minute)
	t.Logf("node %s back: the agents formed a world of two %s later", victim, time.Since(back).Round(100*time.Millisecond))
	byIndex, err := s.workerPods(ctx, workers)
	require.NoError(t, err)
	s.kubectl(nil, "exec", byIndex[0], "--container", "pytorch", "--", "touch", "/tmp/done")
	s.succeed(workers, jobTimeout)
}
