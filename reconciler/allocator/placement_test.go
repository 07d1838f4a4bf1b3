package allocator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cpu(cores int64) Resources { return Resources{MilliCPU: cores * 1000, Memory: cores << 30} }

func TestBestFit(t *testing.T) {
	worker := cpu(2)
	t.Run("the tightest room that fits", func(t *testing.T) {
		assert.Equal(t, 2, bestFit([]Resources{cpu(8), cpu(1), cpu(3), cpu(4)}, worker, nil))
		assert.Equal(t, 1, bestFit([]Resources{cpu(3), cpu(2).Add(Resources{MilliCPU: 500})}, worker, nil), "half a core left beats a core")
	})
	t.Run("an exact fit wins", func(t *testing.T) {
		assert.Equal(t, 1, bestFit([]Resources{cpu(3), cpu(2)}, worker, nil))
	})
	t.Run("ties go to the first", func(t *testing.T) {
		assert.Equal(t, 1, bestFit([]Resources{cpu(1), cpu(4), cpu(4)}, worker, nil))
	})
	t.Run("none fits", func(t *testing.T) {
		assert.Equal(t, -1, bestFit([]Resources{cpu(1), {MilliCPU: 8000}}, worker, nil))
		assert.Equal(t, -1, bestFit(nil, worker, nil))
	})
	t.Run("a CPU worker keeps off free GPUs", func(t *testing.T) {
		gpuNode := cpu(4).Add(Resources{GPU: 8})
		assert.Equal(t, 1, bestFit([]Resources{gpuNode, cpu(16)}, worker, nil))
	})
	t.Run("a GPU worker fills the node with the fewest free GPUs", func(t *testing.T) {
		gpuWorker := cpu(1).Add(Resources{GPU: 1})
		assert.Equal(t, 1, bestFit([]Resources{cpu(4).Add(Resources{GPU: 8}), cpu(32).Add(Resources{GPU: 2})}, gpuWorker, nil))
	})
}

func TestLedgerPrefersIdleRoom(t *testing.T) {
	l := newLedger(map[string]*NodeInfo{
		"a": {Name: "a", Free: cpu(2)},
		"b": {Name: "b", Free: cpu(4)},
		"c": nil,
	})
	require.Equal(t, []string{"a", "b"}, l.names)

	// A running worker holds all of a, the tighter node.
	l.hold("a", cpu(2))
	node, ok := l.place(JobInfo{Request: cpu(2)})
	require.True(t, ok)
	assert.Equal(t, "b", node, "idle room first, though a is the tighter fit")
	assert.True(t, l.keep("a", cpu(2)), "the running worker still has its room")

	// With no idle room left, a new worker takes held room.
	l.hold("b", cpu(2))
	node, ok = l.place(JobInfo{Request: cpu(2)})
	require.True(t, ok)
	assert.Equal(t, "b", node)
	assert.False(t, l.keep("b", cpu(2)), "its holder lost it")
	l.letGo("b", cpu(2))

	_, ok = l.place(JobInfo{Request: cpu(1)})
	assert.False(t, ok, "everything is granted")
	l.release("a", cpu(2))
	node, ok = l.place(JobInfo{Request: cpu(1)})
	require.True(t, ok)
	assert.Equal(t, "a", node)

	assert.False(t, l.keep("gone", cpu(1)), "a node that is gone keeps nobody")
	l.hold("gone", cpu(1))
	l.letGo("gone", cpu(1))
}

func TestPlaceOnlyOnEligibleNodes(t *testing.T) {
	nodes := map[string]*NodeInfo{
		"a": {Name: "a", Free: cpu(8)},
		"b": {Name: "b", Free: cpu(2)},
	}
	onlyA := func(node string) bool { return node == "a" }
	job := JobInfo{Key: "ns/j", Min: 2, Max: 2, Request: cpu(2), Eligible: onlyA}
	list, err := MarginalThroughput{}.Allocate(job, nodes)
	assert.NoError(t, err)
	assert.Equal(t, NodeList{"a", "a"}, list, "b fits best, but the job may not run there")

	job.Eligible = func(string) bool { return false }
	_, err = MarginalThroughput{}.Allocate(job, nodes)
	assert.ErrorIs(t, err, ErrDoesNotFit)
}
