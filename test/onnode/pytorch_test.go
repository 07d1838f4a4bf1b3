//go:build e2e

package onnode

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPyTorchJobsRunToCompletion runs real torchrun in every pod of a
// PyTorchJob, each to its end, and reads what allreduce.py reports: every
// process's rank, the world's size, and the sum of rank+1 over the world
// that gloo's all-reduce computed across the pods.
func TestPyTorchJobsRunToCompletion(t *testing.T) {
	for _, tt := range []struct {
		manifest, name string
		// world is the number of processes, pods the number of pods
		// they ran in.
		world, pods int
		// firstEnds: the workers' Job ends when its first agent
		// succeeds (an elastic job's success policy) and stops the
		// others, whose output may be gone by then.
		firstEnds bool
	}{
		// A Master and two Workers, torchrun's static rendezvous at the
		// master's Service.
		{manifest: "testdata/torch-static.yaml", name: "torch-static", world: 3, pods: 3},
		// Two Workers and no Master, meeting at worker 0 by its
		// per-replica Service's name.
		{manifest: "testdata/torch-replica-names.yaml", name: "torch-names", world: 2, pods: 2},
		// The elastic proposal's example: two Workers at worker 0's c10d
		// rendezvous, started as python -m torch.distributed.run.
		{manifest: "testdata/torch-elastic-proposal.yaml", name: "elastic-example-imagenet", world: 2, pods: 2, firstEnds: true},
		// One pod, two processes, torchrun's standalone rendezvous.
		{manifest: "testdata/torch-standalone.yaml", name: "torch-standalone", world: 2, pods: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := submit(t, []string{tt.manifest}, nil)
			jobs, err := kube.Client.BatchV1().Jobs(s.ns).List(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			require.NotEmpty(t, jobs.Items)
			for _, job := range jobs.Items {
				s.succeed(job.Name, jobTimeout)
			}
			out := s.logs("training.kubeflow.org/job-name="+tt.name, "")
			t.Logf("the pods printed:\n%s", out)
			if tt.firstEnds {
				checkReduced(t, out, tt.world)
				return
			}
			checkAllReduce(t, out, tt.world, tt.pods)
		})
	}
}

var reduceLine = regexp.MustCompile(`(?m)^host=(\S+) rank=(\d+) world=(\d+) sum=(\d+)$`)

// checkAllReduce requires every rank to have reported once, in a world of
// the size given, with the all-reduced sum 1+2+...+world, from as many
// pods as given.
// checkReduced requires a rank to have reported, and every rank that did
// to have been in a world of the size given whose all-reduced sum,
// 1+2+...+world, only every rank together makes.
func checkReduced(t *testing.T, out string, world int) {
	t.Helper()
	lines := reduceLine.FindAllStringSubmatch(out, -1)
	require.NotEmpty(t, lines, "no rank reported")
	for _, m := range lines {
		assert.Equal(t, strconv.Itoa(world), m[3], "rank %s's world", m[2])
		assert.Equal(t, strconv.Itoa(world*(world+1)/2), m[4], "rank %s's all-reduced sum", m[2])
	}
}

func checkAllReduce(t *testing.T, out string, world, pods int) {
	t.Helper()
	ranks := map[int]bool{}
	hosts := map[string]bool{}
	for _, m := range reduceLine.FindAllStringSubmatch(out, -1) {
		rank, _ := strconv.Atoi(m[2])
		size, _ := strconv.Atoi(m[3])
		sum, _ := strconv.Atoi(m[4])
		assert.Equal(t, world, size, "rank %d's world", rank)
		assert.Equal(t, world*(world+1)/2, sum, "rank %d's all-reduced sum", rank)
		assert.False(t, ranks[rank], "rank %d reported twice", rank)
		ranks[rank] = true
		hosts[m[1]] = true
	}
	assert.Len(t, ranks, world, "ranks that reported")
	assert.Len(t, hosts, pods, "pods the ranks ran in")
}
