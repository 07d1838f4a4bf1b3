package diserver

import (
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
)

func TestResize(t *testing.T) {
	b := handoff.Bounds{Min: 2, Max: 5}
	for _, tc := range []struct {
		current int32
		delta   int64
		want    int32
	}{
		{current: 2, delta: 1, want: 3},
		{current: 2, delta: 3, want: 5},
		{current: 5, delta: -3, want: 2},
		{current: 4, delta: -1, want: 3},
		// A count the reconciler has yet to bring back within the bounds
		// may still move into them.
		{current: 7, delta: -2, want: 5},
		{current: 1, delta: 1, want: 2},
	} {
		t.Run(fmt.Sprintf("%d%+d", tc.current, tc.delta), func(t *testing.T) {
			got, err := resize(tc.current, tc.delta, b)
			require.Nil(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestResizeRefusesLeavingTheBounds(t *testing.T) {
	b := handoff.Bounds{Min: 2, Max: 5}
	for _, tc := range []struct {
		current int32
		delta   int64
		message string
	}{
		{4, 2, "replicas: cannot add 2 workers: the job has 4 and must keep between 2 and 5"},
		{2, -1, "replicas: cannot remove 1 worker: the job has 2 and must keep between 2 and 5"},
		{3, -3, "replicas: cannot remove 3 workers: the job has 3 and must keep between 2 and 5"},
		{7, -1, "replicas: cannot remove 1 worker: the job has 7 and must keep between 2 and 5"},
		{3, handoff.MaxWorkers + 1, "cannot add 100001 workers"},
		{3, math.MaxInt64, "cannot add 9223372036854775807 workers"},
		{3, -math.MaxInt64, "cannot remove 9223372036854775807 workers"},
	} {
		t.Run(fmt.Sprintf("%d%+d", tc.current, tc.delta), func(t *testing.T) {
			_, err := resize(tc.current, tc.delta, b)
			require.NotNil(t, err)
			require.Equal(t, http.StatusUnprocessableEntity, err.status)
			require.Contains(t, err.message, tc.message)
		})
	}
}
