package allocator

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cluster makes the nodes map from names and their free room.
func cluster(free map[string]Resources) map[string]*NodeInfo {
	nodes := make(map[string]*NodeInfo, len(free))
	for name, room := range free {
		nodes[name] = &NodeInfo{Name: name, Free: room}
	}
	return nodes
}

// jobsOf keys jobs by their keys.
func jobsOf(jobs ...JobInfo) map[string]JobInfo {
	out := make(map[string]JobInfo, len(jobs))
	for _, j := range jobs {
		out[j.Key] = j
	}
	return out
}

// repeat is a NodeList of n workers on node.
func repeat(node string, n int) NodeList {
	out := make(NodeList, n)
	for i := range out {
		out[i] = node
	}
	return out
}

// linear is the profile of a job that gains the same from every worker.
var linear = map[int32]float64{1: 10, 2: 20}

func TestOptimizeRespectsMinAndMax(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(16)})
	got, err := MarginalThroughput{}.Optimize(jobsOf(
		JobInfo{Key: "ns/capped", Min: 2, Max: 3, Request: cpu(1)},
		JobInfo{Key: "ns/fixed", Min: 2, Max: 1, Request: cpu(1)},
		JobInfo{Key: "ns/flat", Min: 1, Max: 10, Request: cpu(1), Throughput: map[int32]float64{1: 10, 2: 10}},
	), nodes, nil)
	require.NoError(t, err)
	assert.Len(t, got["ns/capped"], 3, "grows to Max and no further")
	assert.Len(t, got["ns/fixed"], 2, "a Max below Min reads as Min")
	assert.Len(t, got["ns/flat"], 1, "a job whose next worker gains nothing stays at Min")
}

func TestOptimizeSharesEvenlyWithoutProfiles(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(8), "n2": cpu(8)})
	got, err := MarginalThroughput{}.Optimize(jobsOf(
		JobInfo{Key: "ns/a", Min: 1, Max: 20, Request: cpu(2)},
		JobInfo{Key: "ns/b", Min: 3, Max: 20, Request: cpu(2)},
	), nodes, nil)
	require.NoError(t, err)
	assert.Len(t, got["ns/a"], 4)
	assert.Len(t, got["ns/b"], 4)
}

func TestOptimizeGivesRoomToTheHighestGain(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(6)})
	got, err := MarginalThroughput{}.Optimize(jobsOf(
		// Relative gains 0.5, 0.3, 0.3, ...
		JobInfo{Key: "ns/concave", Min: 1, Max: 6, Request: cpu(1), Throughput: map[int32]float64{1: 10, 2: 15, 3: 18}},
		// Relative gains 0.4 from its third worker on.
		JobInfo{Key: "ns/steady", Min: 2, Max: 6, Request: cpu(1), Throughput: map[int32]float64{2: 100, 3: 120}},
	), nodes, nil)
	require.NoError(t, err)
	// Mins take 3; then concave's 0.5, steady's 0.4, steady's 0.4.
	assert.Len(t, got["ns/concave"], 2)
	assert.Len(t, got["ns/steady"], 4)
}

func TestOptimizeServesHighPriorityMinimumsFirst(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(2)})
	got, err := MarginalThroughput{}.Optimize(jobsOf(
		JobInfo{Key: "ns/a-normal", Min: 2, Max: 2, Priority: PriorityNormal, Request: cpu(1)},
		JobInfo{Key: "ns/b-high", Min: 2, Max: 2, Priority: PriorityHigh, Request: cpu(1)},
	), nodes, nil)
	assert.Equal(t, NodeList{"n1", "n1"}, got["ns/b-high"])
	assert.Empty(t, got["ns/a-normal"])
	require.Contains(t, got, "ns/a-normal", "the result holds every job")
	require.ErrorIs(t, err, ErrDoesNotFit)
	assert.ErrorContains(t, err, "ns/a-normal")
	assert.NotContains(t, err.Error(), "ns/b-high")
}

func TestOptimizeKeepsARunningMinimumAgainstHighPriority(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(2)})
	got, err := MarginalThroughput{}.Optimize(jobsOf(
		JobInfo{Key: "ns/running", Min: 2, Max: 2, Request: cpu(1)},
		JobInfo{Key: "ns/urgent", Min: 1, Max: 1, Priority: PriorityHigh, Request: cpu(1)},
	), nodes, map[string]NodeList{"ns/running": {"n1", "n1"}})
	assert.Equal(t, NodeList{"n1", "n1"}, got["ns/running"])
	assert.Empty(t, got["ns/urgent"])
	assert.ErrorIs(t, err, ErrDoesNotFit)
}

func TestOptimizeReportsEveryJobThatDoesNotFit(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(4), "n2": cpu(4)})
	got, err := MarginalThroughput{}.Optimize(jobsOf(
		JobInfo{Key: "ns/huge", Min: 1, Max: 1, Request: cpu(5)},
		JobInfo{Key: "ns/many", Min: 9, Max: 9, Request: cpu(1)},
		JobInfo{Key: "ns/fits", Min: 1, Max: 8, Request: cpu(1)},
	), nodes, nil)
	require.ErrorIs(t, err, ErrDoesNotFit)
	assert.ErrorContains(t, err, "ns/huge")
	assert.ErrorContains(t, err, "ns/many")
	assert.Empty(t, got["ns/huge"])
	assert.Empty(t, got["ns/many"], "no partial minimum")
	assert.Len(t, got["ns/fits"], 8, "what ns/many could not use goes to the others")
}

func TestOptimizeShrinksALowGainJobToGrowAHighGainOne(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(8)})
	jobs := jobsOf(
		// Relative gains 1/3 to its fourth worker, then 0.1.
		JobInfo{Key: "ns/low", Min: 1, Max: 8, Request: cpu(1), Throughput: map[int32]float64{1: 10, 4: 20, 8: 24}},
		JobInfo{Key: "ns/high", Min: 1, Max: 4, Request: cpu(1), Throughput: linear},
	)
	got, err := MarginalThroughput{}.Optimize(jobs, nodes, map[string]NodeList{"ns/low": repeat("n1", 8)})
	require.NoError(t, err)
	assert.Equal(t, repeat("n1", 4), got["ns/high"])
	assert.Equal(t, repeat("n1", 4), got["ns/low"], "its lowest ordinals stay")
}

func TestOptimizeIncumbentBonus(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(5)})
	running := map[string]NodeList{"ns/incumbent": repeat("n1", 4), "ns/newcomer": {"n1"}}
	// The incumbent's workers gain 0.5 each, 0.75 with the bonus.
	incumbent := JobInfo{Key: "ns/incumbent", Min: 1, Max: 4, Request: cpu(1), Throughput: map[int32]float64{1: 10, 4: 25}}

	t.Run("a better gain within the bonus does not take a running worker", func(t *testing.T) {
		// 0.7 each.
		newcomer := JobInfo{Key: "ns/newcomer", Min: 1, Max: 4, Request: cpu(1), Throughput: map[int32]float64{1: 10, 2: 17}}
		got, err := MarginalThroughput{}.Optimize(jobsOf(incumbent, newcomer), nodes, running)
		require.NoError(t, err)
		assert.Equal(t, running, got)
	})
	t.Run("a gain beyond the bonus does", func(t *testing.T) {
		newcomer := JobInfo{Key: "ns/newcomer", Min: 1, Max: 4, Request: cpu(1), Throughput: linear}
		got, err := MarginalThroughput{}.Optimize(jobsOf(incumbent, newcomer), nodes, running)
		require.NoError(t, err)
		assert.Equal(t, repeat("n1", 4), got["ns/newcomer"])
		assert.Equal(t, NodeList{"n1"}, got["ns/incumbent"])
	})
}

func TestOptimizeIsStable(t *testing.T) {
	nodes := cluster(map[string]Resources{
		"n1": cpu(16), "n2": cpu(16), "n3": cpu(8).Add(Resources{GPU: 4}), "n4": cpu(12),
	})
	jobs := jobsOf(
		JobInfo{Key: "a/sqrt", Min: 1, Max: 12, Request: cpu(2), Throughput: map[int32]float64{1: 10, 4: 20, 9: 30}},
		JobInfo{Key: "a/linear", Min: 2, Max: 6, Request: cpu(3), Throughput: linear},
		JobInfo{Key: "b/gpu", Min: 1, Max: 4, Priority: PriorityHigh, Request: cpu(2).Add(Resources{GPU: 1}), Throughput: map[int32]float64{1: 5, 2: 9}},
		JobInfo{Key: "b/new", Min: 2, Max: 10, Request: cpu(1)},
		JobInfo{Key: "c/flat", Min: 3, Max: 9, Request: cpu(1), Throughput: map[int32]float64{3: 30, 5: 40}},
	)
	first, err := MarginalThroughput{}.Optimize(jobs, nodes, nil)
	require.NoError(t, err)
	checkAllocations(t, jobs, nodes, nil, first, err)
	second, err := MarginalThroughput{}.Optimize(jobs, nodes, first)
	require.NoError(t, err)
	assert.Equal(t, first, second)
}

func TestOptimizeIsDeterministic(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(4), "n2": cpu(4), "n3": cpu(4), "n4": cpu(4)})
	var jobs []JobInfo
	for _, key := range []string{"ns/a", "ns/b", "ns/c", "ns/d", "ns/e"} {
		jobs = append(jobs, JobInfo{Key: key, Min: 1, Max: 5, Request: cpu(1)})
	}
	want, err := MarginalThroughput{}.Optimize(jobsOf(jobs...), nodes, nil)
	require.NoError(t, err)
	for range 20 {
		got, err := MarginalThroughput{}.Optimize(jobsOf(jobs...), nodes, nil)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

func TestOptimizeNeverMovesARunningWorker(t *testing.T) {
	nodes := cluster(map[string]Resources{"big": cpu(8), "tight": cpu(3)})
	job := JobInfo{Key: "ns/job", Min: 1, Max: 4, Request: cpu(1)}
	got, err := MarginalThroughput{}.Optimize(jobsOf(job), nodes, map[string]NodeList{"ns/job": {"big", "big"}})
	require.NoError(t, err)
	assert.Equal(t, NodeList{"big", "big", "tight", "tight"}, got["ns/job"], "running workers stay on big; new ones fit tightest")
}

func TestOptimizeAfterANodeIsGone(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(4), "n2": cpu(4)})
	job := JobInfo{Key: "ns/job", Min: 2, Max: 4, Request: cpu(2)}

	t.Run("a lost worker is placed again", func(t *testing.T) {
		got, err := MarginalThroughput{}.Optimize(jobsOf(job), nodes, map[string]NodeList{"ns/job": {"n1", "n1", "gone", "n2"}})
		require.NoError(t, err)
		assert.Equal(t, NodeList{"n1", "n1", "n2", "n2"}, got["ns/job"], "worker 2 is new, the others stay")
	})
	t.Run("a worker short of room ends the job's list", func(t *testing.T) {
		// n2 shrank under worker 2: it cannot stay and must not move, so the
		// job ends below it and worker 3 on n1 goes too, since a StatefulSet
		// cannot lose a middle ordinal. The next period regrows the job.
		shrunk := cluster(map[string]Resources{"n1": cpu(6), "n2": cpu(1)})
		got, err := MarginalThroughput{}.Optimize(jobsOf(job), shrunk, map[string]NodeList{"ns/job": {"n1", "n1", "n2", "n1"}})
		require.NoError(t, err)
		assert.Equal(t, NodeList{"n1", "n1"}, got["ns/job"])
	})
	t.Run("a lost worker of the minimum is placed again", func(t *testing.T) {
		got, err := MarginalThroughput{}.Optimize(jobsOf(job), nodes, map[string]NodeList{"ns/job": {"gone", "n1"}})
		require.NoError(t, err)
		assert.Equal(t, NodeList{"n1", "n1"}, got["ns/job"][:2], "worker 0 is new, worker 1 stays")
	})
}

func TestOptimizeNeverGivesAFixedWorkerAnotherNode(t *testing.T) {
	t.Run("a fixed worker keeps its room against a job served before it", func(t *testing.T) {
		// Both count on n1's one place; only b's pod is pinned there.
		nodes := cluster(map[string]Resources{"n1": cpu(2), "n2": cpu(2)})
		got, err := MarginalThroughput{}.Optimize(jobsOf(
			JobInfo{Key: "ns/a", Min: 1, Max: 1, Request: cpu(2)},
			JobInfo{Key: "ns/b", Min: 1, Max: 1, Request: cpu(2), Fixed: map[int]bool{0: true}},
		), nodes, map[string]NodeList{"ns/a": {"n1"}, "ns/b": {"n1"}})
		require.NoError(t, err)
		assert.Equal(t, NodeList{"n1"}, got["ns/b"])
		assert.Equal(t, NodeList{"n2"}, got["ns/a"])
	})
	t.Run("a fixed worker stays on a node short of room, which takes nothing more", func(t *testing.T) {
		nodes := cluster(map[string]Resources{"n1": cpu(1), "n2": cpu(4)})
		job := JobInfo{Key: "ns/job", Min: 2, Max: 2, Request: cpu(2), Fixed: map[int]bool{0: true}}
		got, err := MarginalThroughput{}.Optimize(jobsOf(job), nodes, map[string]NodeList{"ns/job": {"n1", "n1"}})
		require.NoError(t, err)
		assert.Equal(t, NodeList{"n1", "n2"}, got["ns/job"], "worker 1, not fixed, moves")
	})
	t.Run("a fixed worker on a node gone is not placed anew", func(t *testing.T) {
		nodes := cluster(map[string]Resources{"n1": cpu(8)})
		job := JobInfo{Key: "ns/job", Min: 1, Max: 3, Request: cpu(2), Fixed: map[int]bool{0: true, 1: true}}
		got, err := MarginalThroughput{}.Optimize(jobsOf(job), nodes, map[string]NodeList{"ns/job": {"gone", "gone", "n1"}})
		require.NoError(t, err)
		// Worker 1 cannot stay and must not move: the job ends below it.
		assert.Equal(t, NodeList{"gone"}, got["ns/job"])
	})
	t.Run("a job given up lets go of the room its fixed workers held", func(t *testing.T) {
		nodes := cluster(map[string]Resources{"n1": cpu(2)})
		got, err := MarginalThroughput{}.Optimize(jobsOf(
			JobInfo{Key: "ns/big", Min: 2, Max: 2, Request: cpu(2), Fixed: map[int]bool{0: true}},
			JobInfo{Key: "ns/small", Min: 1, Max: 1, Request: cpu(2)},
		), nodes, map[string]NodeList{"ns/big": {"n1"}})
		require.ErrorIs(t, err, ErrDoesNotFit)
		assert.Empty(t, got["ns/big"])
		assert.Equal(t, NodeList{"n1"}, got["ns/small"])
	})
}

func TestOptimizeTakesIdleRoomBeforeRunningWorkersRoom(t *testing.T) {
	nodes := cluster(map[string]Resources{"a-busy": cpu(2), "b-idle": cpu(4)})
	jobs := jobsOf(
		JobInfo{Key: "ns/running", Min: 1, Max: 2, Request: cpu(1)},
		JobInfo{Key: "ns/new", Min: 1, Max: 1, Request: cpu(1)},
	)
	got, err := MarginalThroughput{}.Optimize(jobs, nodes, map[string]NodeList{"ns/running": {"a-busy", "a-busy"}})
	require.NoError(t, err)
	assert.Equal(t, NodeList{"a-busy", "a-busy"}, got["ns/running"])
	assert.Equal(t, NodeList{"b-idle"}, got["ns/new"], "not the tighter a-busy, which a running worker holds")
}

func TestOptimizeIgnoresStaleAllocations(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(2)})
	got, err := MarginalThroughput{}.Optimize(jobsOf(JobInfo{Key: "ns/job", Min: 1, Max: 2, Request: cpu(1)}), nodes,
		map[string]NodeList{"ns/finished": {"n1", "n1"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]NodeList{"ns/job": {"n1", "n1"}}, got)
}

func TestAllocate(t *testing.T) {
	nodes := cluster(map[string]Resources{"n1": cpu(8), "n2": cpu(3), "n3": cpu(3)})
	t.Run("best fit", func(t *testing.T) {
		got, err := MarginalThroughput{}.Allocate(JobInfo{Key: "ns/job", Min: 3, Max: 9, Request: cpu(2)}, nodes)
		require.NoError(t, err)
		assert.Equal(t, NodeList{"n2", "n3", "n1"}, got, "the 3-core holes first, by name; the big node last")
	})
	t.Run("no room", func(t *testing.T) {
		got, err := MarginalThroughput{}.Allocate(JobInfo{Key: "ns/job", Min: 7, Max: 9, Request: cpu(2)}, nodes)
		assert.Nil(t, got)
		require.ErrorIs(t, err, ErrDoesNotFit)
		assert.ErrorContains(t, err, "ns/job")
	})
	t.Run("no minimum", func(t *testing.T) {
		got, err := MarginalThroughput{}.Allocate(JobInfo{Key: "ns/job", Max: 9, Request: cpu(2)}, nodes)
		require.NoError(t, err)
		assert.Empty(t, got)
	})
}

// checkAllocations fails the test unless got holds what every result of
// a policy must: a list for every job, empty exactly when err reports the
// job, otherwise within [Min, Max]; no node given more than its Free; and
// every worker that ran on a node still there kept it. Plain comparisons
// rather than testify's: the simulation calls it thousands of times.
func checkAllocations(t testing.TB, jobs map[string]JobInfo, nodes map[string]*NodeInfo, prev, got map[string]NodeList, err error) {
	t.Helper()
	if len(got) != len(jobs) {
		t.Fatalf("%d lists for %d jobs", len(got), len(jobs))
	}
	if err != nil && !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("unexpected error: %v", err)
	}
	reported := reportedJobs(err)
	used := map[string]Resources{}
	for key, job := range jobs {
		list, ok := got[key]
		switch {
		case !ok:
			t.Fatalf("job %s has no list", key)
		case reported[doesNotFit(key).Error()]:
			if len(list) != 0 {
				t.Fatalf("job %s is reported unplaced but has %v", key, list)
			}
			continue
		case len(list) < int(job.Min) || len(list) > int(max(job.Min, job.Max)):
			t.Fatalf("job %s has %d workers, outside [%d, %d]", key, len(list), job.Min, job.Max)
		}
		for i, node := range list {
			if _, ok := nodes[node]; !ok {
				t.Fatalf("job %s worker %d is on unknown node %q", key, i, node)
			}
			used[node] = used[node].Add(job.Request)
			if i < len(prev[key]) && nodes[prev[key][i]] != nil && prev[key][i] != node {
				t.Fatalf("job %s worker %d moved from %s to %s", key, i, prev[key][i], node)
			}
		}
	}
	for name, u := range used {
		if !u.FitsIn(nodes[name].Free) {
			t.Fatalf("node %s holds %+v of %+v", name, u, nodes[name].Free)
		}
	}
}

// reportedJobs are the errors joined in err, by message.
func reportedJobs(err error) map[string]bool {
	out := map[string]bool{}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			out[e.Error()] = true
		}
	}
	return out
}
