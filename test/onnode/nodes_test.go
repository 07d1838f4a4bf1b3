//go:build e2e

package onnode

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// needNodes skips a test that needs a cluster of more nodes than this one
// has: make e2e runs those alone on a cluster of two (TRAINFN_NODES=2).
func needNodes(t *testing.T, n int) {
	t.Helper()
	if len(kube.Members) < n {
		t.Skipf("needs %d nodes, the cluster has %d: TRAINFN_NODES=%d", n, len(kube.Members), n)
	}
}

// nodeNames are the cluster's nodes' names.
func nodeNames() []string {
	names := make([]string, len(kube.Members))
	for i, m := range kube.Members {
		names[i] = m.Name
	}
	return names
}

var diLine = regexp.MustCompile(`(?m)^rank=(\d+) host=(\S+) started$`)

// TestJobsSpanNodes runs a job of each kind, launched each way, whose
// manifest spreads its pods over the nodes as multi-node jobs are spread:
// every rank reports the host it ran in, and those hosts are pods on every
// node.
func TestJobsSpanNodes(t *testing.T) {
	needNodes(t, 2)
	for _, tt := range []struct {
		manifest, name string
		// more are the other files the render takes: a function config,
		// a runtime.
		more []string
		// ends is the Job whose success ends the job.
		ends string
		// pods is how many pods the job runs; hosts reads the hosts its
		// ranks reported from what the pods printed.
		pods  int
		hosts func(t *testing.T, s *submission) []string
	}{
		{manifest: "testdata/nodes/pi.yaml", name: "pi-nodes", ends: "pi-nodes-launcher", pods: 3, hosts: mpiHosts("pi-nodes", 1000)},
		{manifest: "testdata/nodes/pi-rsh.yaml", name: "pi-rsh-nodes", ends: "pi-rsh-nodes-launcher", pods: 3, hosts: mpiHosts("pi-rsh-nodes", 0)},
		{manifest: "testdata/nodes/pi-exec.yaml", name: "pi-exec-nodes", ends: "pi-exec-nodes-launcher", pods: 3, hosts: mpiHosts("pi-exec-nodes", 0), more: []string{"delivery"}},
		{manifest: "testdata/nodes/torch.yaml", name: "torch-nodes", ends: "torch-nodes-master", pods: 2, hosts: torchHosts("torch-nodes", 2)},
		{manifest: "testdata/nodes/dijob.yaml", name: "di-nodes", ends: "di-nodes-worker", pods: 2, hosts: diHosts("di-nodes", 2)},
		{manifest: "testdata/nodes/trainjob.yaml", name: "trainjob-nodes", more: []string{"../../examples/trainer/runtimes/torch_distributed.yaml"}, pods: 2, hosts: torchHosts("trainjob-nodes", 2)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			manifests := []string{tt.manifest}
			for _, more := range tt.more {
				if more == "delivery" {
					more = writeFile(t, "trainfn.yaml", deliveryConfig())
				}
				manifests = append(manifests, more)
			}
			s := submit(t, manifests, nil)
			placed := s.placement("training.kubeflow.org/job-name="+tt.name, tt.pods, time.Minute)
			t.Logf("placed: %v", placed)
			ends := tt.ends
			if ends == "" {
				ends = s.onlyJob()
			}
			s.succeed(ends, jobTimeout)
			nodes := map[string]bool{}
			for _, host := range tt.hosts(t, s) {
				node, ok := placed[host]
				require.True(t, ok, "a rank reported host %s, which is none of the job's pods %v", host, placed)
				nodes[node] = true
			}
			assert.Equal(t, nodeNames(), slices.Sorted(maps.Keys(nodes)), "the nodes the ranks ran on")
		})
	}
}

// mpiHosts reads pi's ranks from the launcher's output: each rank's host
// is a worker pod, and pi is printed.
func mpiHosts(job string, uid int) func(t *testing.T, s *submission) []string {
	return func(t *testing.T, s *submission) []string {
		out := s.logs("batch.kubernetes.io/job-name="+job+"-launcher", "")
		t.Logf("the launcher printed:\n%s", out)
		checkPi(t, out, job, 2, 2, uid)
		var hosts []string
		for _, m := range rankLine.FindAllStringSubmatch(out, -1) {
			hosts = append(hosts, m[3])
		}
		return hosts
	}
}

// torchHosts reads allreduce.py's report from every pod: one world of the
// size given, its sum all-reduced over the pods.
func torchHosts(job string, world int) func(t *testing.T, s *submission) []string {
	return func(t *testing.T, s *submission) []string {
		out := s.logs("training.kubeflow.org/job-name="+job, "")
		t.Logf("the pods printed:\n%s", out)
		checkAllReduce(t, out, world, world)
		var hosts []string
		for _, m := range reduceLine.FindAllStringSubmatch(out, -1) {
			hosts = append(hosts, m[1])
		}
		return hosts
	}
}

// diHosts reads each DI rank's report of itself.
func diHosts(job string, ranks int) func(t *testing.T, s *submission) []string {
	return func(t *testing.T, s *submission) []string {
		out := s.logs("training.kubeflow.org/job-name="+job, "")
		t.Logf("the pods printed:\n%s", out)
		lines := diLine.FindAllStringSubmatch(out, -1)
		require.Len(t, lines, ranks, "ranks that reported")
		var hosts []string
		for _, m := range lines {
			hosts = append(hosts, m[2])
		}
		return hosts
	}
}

// placement waits until n of the job's pods are bound to nodes, and
// returns each one's host name (its hostname, or its name when it has
// none, as the pod sees itself) with its node, before the job ends and
// its pods go.
func (s *submission) placement(selector string, n int, within time.Duration) map[string]string {
	s.t.Helper()
	placed := map[string]string{}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, nil
		}
		for _, pod := range pods.Items {
			if pod.Spec.NodeName == "" {
				continue
			}
			host := pod.Spec.Hostname
			if host == "" {
				host = pod.Name
			}
			placed[host] = pod.Spec.NodeName
		}
		return len(placed) >= n, nil
	})
	require.NoError(s.t, err, "%d pods of %s bound to nodes; bound: %v", n, selector, placed)
	return placed
}

// onlyJob is the name of the one Job the submission made.
func (s *submission) onlyJob() string {
	s.t.Helper()
	jobs, err := kube.Client.BatchV1().Jobs(s.ns).List(context.Background(), metav1.ListOptions{})
	require.NoError(s.t, err)
	require.Len(s.t, jobs.Items, 1, "the Jobs made")
	return jobs.Items[0].Name
}
