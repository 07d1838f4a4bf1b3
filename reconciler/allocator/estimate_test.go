package allocator

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMarginalGain(t *testing.T) {
	profiled := map[int32]float64{1: 10, 2: 18, 4: 30}
	cases := []struct {
		name       string
		throughput map[int32]float64
		n          int32
		want       float64
	}{
		{"no observations: one worker's worth", nil, 3, 1},
		{"only junk observations count as none", map[int32]float64{-1: 5, 2: math.NaN(), 3: -4, 5: math.Inf(1)}, 1, 1},
		{"from zero workers, (0,0) is known", profiled, 0, 10},
		{"both counts known: their difference", profiled, 1, 8},
		{"between known counts: their slope", profiled, 2, 6},
		{"n known, n+1 not: slope to the next known", profiled, 3, 6},
		{"beyond the last: slope of the last two", profiled, 4, 6},
		{"far beyond the last: the same slope", profiled, 40, 6},
		{"one observation: slope from the origin", map[int32]float64{4: 20}, 1, 5},
		{"one observation, beyond it: the same slope", map[int32]float64{4: 20}, 9, 5},
		{"an observation at zero workers is ignored", map[int32]float64{0: 7, 2: 4}, 0, 2},
		{"a fall is no gain", map[int32]float64{2: 10, 4: 8}, 2, 0},
		{"a fall extrapolates to no gain", map[int32]float64{2: 10, 4: 8}, 6, 0},
		{"a negative count reads as zero", profiled, -3, 10},
		{"the largest count does not overflow", profiled, math.MaxInt32, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.InDelta(t, c.want, MarginalGain(c.throughput, c.n), 1e-9)
		})
	}
}

func TestRelativeGainIsUnitFree(t *testing.T) {
	perSecond := map[int32]float64{1: 10, 2: 18, 4: 30}
	perHour := map[int32]float64{1: 36000, 2: 64800, 4: 108000}
	for n := range int32(6) {
		assert.InDelta(t, relativeGain(knownPoints(perSecond), n), relativeGain(knownPoints(perHour), n), 1e-9, "n=%d", n)
	}
	assert.InDelta(t, 0.8, relativeGain(knownPoints(perSecond), 1), 1e-9, "8 more of a best 10 per worker")
	assert.InDelta(t, 0.6, relativeGain(knownPoints(perSecond), 5), 1e-9)
}

func TestRelativeGainEdges(t *testing.T) {
	assert.Equal(t, 1.0, relativeGain(knownPoints(nil), 7), "an unprofiled job scales linearly")
	assert.Equal(t, 0.0, relativeGain(knownPoints(map[int32]float64{2: 0, 3: 0}), 3), "a job that makes no progress gains nothing")
	// The best per-worker throughput need not be at the smallest count.
	assert.InDelta(t, 0.25, relativeGain(knownPoints(map[int32]float64{1: 2, 2: 8, 3: 9}), 2), 1e-9)
}
