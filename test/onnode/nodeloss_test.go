//go:build e2e

package onnode

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lostJobTimeout bounds a job across a lost node: Kubernetes takes the node
// for lost after 50 s (node-monitor-grace-period), the pod garbage
// collector deletes its pods up to a minute after its Node is gone, and
// the worker is made again elsewhere.
const lostJobTimeout = 8 * time.Minute

// TestNodeLostUnderAWorker loses, while mpirun runs, the node of a worker
// that is not the launcher's, as a machine dies: its kubelet and
// containers killed at once, cut off the network, and its Node deleted
// once NotReady, as a cloud's node controller does. Nobody steps in: the
// pod garbage collector fails the worker's pod with DisruptionTarget, the
// workers' Job makes it again on the other node without counting a
// failure, and the launcher, whose mpirun failed while the worker was not
// there, runs it again in the same attempt once the worker answers. The
// job succeeds with nothing of its backoffLimit spent.
func TestNodeLostUnderAWorker(t *testing.T) {
	needNodes(t, 2)
	s, launcherNode := startLostJob(t)
	victim := otherNode(launcherNode)
	lost := loseNode(t, victim)
	succeeded, _ := s.finish("pi-lost-launcher", lostJobTimeout)
	out := s.logs("batch.kubernetes.io/job-name=pi-lost-launcher", "")
	t.Logf("the launcher printed:\n%s", out)
	require.True(t, succeeded, "the job failed")
	t.Logf("node %s lost: the job succeeded %s later", victim, time.Since(lost).Round(100*time.Millisecond))
	checkPi(t, out, "pi-lost", 2, 2, 0)
	assert.Contains(t, out, "a disruption, not the command", "mpirun did not fail when its worker's node went")
	assert.Equal(t, 1, s.launcherAttempts("pi-lost-launcher"), "the launcher's attempts: a lost node spends none")
	workers, err := kube.Client.BatchV1().Jobs(s.ns).Get(context.Background(), "pi-lost-worker", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Zero(t, workers.Status.Failed, "the workers' failures: a lost node's pod counts as none")
}

// TestNodeLostUnderTheLauncher loses the launcher's node, and a worker's
// with it, while mpirun runs: the launcher's Job makes the launcher again
// once its pod is gone, as it makes mpi-operator's, and the new attempt
// waits for the workers, one of them made again too, and succeeds.
func TestNodeLostUnderTheLauncher(t *testing.T) {
	needNodes(t, 2)
	s, launcherNode := startLostJob(t)
	lost := loseNode(t, launcherNode)
	succeeded, _ := s.finish("pi-lost-launcher", lostJobTimeout)
	out := s.logs("batch.kubernetes.io/job-name=pi-lost-launcher", "")
	t.Logf("the new launcher printed:\n%s", out)
	require.True(t, succeeded, "the job failed")
	t.Logf("node %s lost: the job succeeded %s later", launcherNode, time.Since(lost).Round(100*time.Millisecond))
	checkPi(t, out, "pi-lost", 2, 2, 0)
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

// otherNode is a node that is not the one given.
func otherNode(name string) string {
	for _, n := range nodeNames() {
		if n != name {
			return n
		}
	}
	return ""
}

// loseNode loses a node as its machine dies and deletes its Node once it
// is NotReady, and brings it back when the test ends, for the tests after
// it. It returns when the node was lost.
func loseNode(t *testing.T, name string) time.Time {
	t.Helper()
	require.NotEmpty(t, name)
	lost := time.Now()
	require.NoError(t, kube.LoseMember(name))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		assert.NoError(t, kube.ReturnMember(ctx, name), "bringing %s back", name)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, kube.DeleteNode(ctx, name))
	t.Logf("node %s taken for lost and its Node deleted %s after it was lost", name, time.Since(lost).Round(100*time.Millisecond))
	return lost
}
