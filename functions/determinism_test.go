package functions

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/test/jobstream"
)

// TestManyJobsRenderTheSameWhateverTheOrder renders 10,000 jobs twice in
// order and once shuffled: the output must be byte for byte the same, as
// Git and Argo CD diffs rely on, though the jobs are expanded side by side.
func TestManyJobsRenderTheSameWhateverTheOrder(t *testing.T) {
	n := 10000
	if testing.Short() || raceEnabled {
		n = 500
	}
	first := renderJobs(t, jobstream.Mixed(n))
	perKind := objectsPerKind(t)
	objects := 0
	for i := range n {
		objects += perKind[i%len(perKind)]
	}
	require.Equal(t, objects, documents(first), "every job rendered")
	assert.True(t, bytes.Equal(first, renderJobs(t, jobstream.Mixed(n))), "rendered twice, the output differs")
	assert.True(t, bytes.Equal(first, renderJobs(t, jobstream.Shuffled(n, 1))), "shuffled, the output differs")
}

// objectsPerKind counts the objects one job of each of jobstream.Mixed's
// kinds renders to, in the order Mixed repeats them.
func objectsPerKind(t *testing.T) []int {
	docs, err := ReadDocuments([]string{Stdin}, bytes.NewReader(jobstream.Mixed(3)))
	require.NoError(t, err)
	var counts []int
	for _, doc := range docs {
		objects, diags := Expand([]Document{doc})
		require.False(t, diags.HasErrors(), "%v", diags)
		counts = append(counts, len(objects))
	}
	return counts
}

func documents(stream []byte) int { return bytes.Count(stream, []byte("\n---\n")) + 1 }

func renderJobs(t *testing.T, stream []byte) []byte {
	t.Helper()
	docs, err := ReadDocuments([]string{Stdin}, bytes.NewReader(stream))
	require.NoError(t, err)
	out, diags := Expand(docs)
	require.False(t, diags.HasErrors(), "%v", diags)
	var b bytes.Buffer
	require.NoError(t, WriteDocuments(&b, out))
	return b.Bytes()
}
