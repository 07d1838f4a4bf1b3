package allocator

import (
	"cmp"
	"math"
	"slices"
)

// unprofiledGain is the gain assumed of every worker of a job that has no
// throughput observations: linear scaling, so that jobs nobody has measured
// share capacity evenly.
const unprofiledGain = 1.0

// point is one known (worker count, throughput) pair.
type point struct {
	count int32
	value float64
}

// knownPoints are the usable observations in count order, led by (0, 0): no
// workers, no throughput, whatever the map says. Negative counts and
// throughputs that are negative or not finite are dropped as measurement
// junk.
func knownPoints(throughput map[int32]float64) []point {
	points := []point{{0, 0}}
	for n, t := range throughput {
		if n > 0 && t >= 0 && !math.IsInf(t, 0) && !math.IsNaN(t) {
			points = append(points, point{n, t})
		}
	}
	slices.SortFunc(points, func(a, b point) int { return cmp.Compare(a.count, b.count) })
	return points
}

// MarginalGain estimates T(n+1)−T(n), what a job gains from its worker
// n+1, from its observed throughput T:
//
//   - with no observations, unprofiledGain (1.0);
//   - with T(n) and T(n+1) known, their difference;
//   - otherwise the slope between the nearest known counts around n (the
//     last at or below n, the first above it), (0, 0) counting as known;
//   - beyond the last known count, the slope of the last two known points.
//
// It is never below 0: a throughput that fell as workers were added means
// the next worker gains nothing, not that it pays to remove one. Slopes are
// straight lines because that is all two points say. Beyond the last known
// count that overestimates a concave curve, which is what lets a job grow
// into counts it has not run at: it keeps growing until a measurement shows
// the flattening.
func MarginalGain(throughput map[int32]float64, n int32) float64 {
	return gainAt(knownPoints(throughput), n)
}

// gainAt is MarginalGain over knownPoints.
func gainAt(points []point, n int32) float64 {
	if len(points) == 1 {
		return unprofiledGain
	}
	next := min(max(n, 0), math.MaxInt32-1) + 1
	above, _ := slices.BinarySearchFunc(points, next, func(p point, c int32) int { return cmp.Compare(p.count, c) })
	var lo, hi point
	if above == len(points) {
		lo, hi = points[len(points)-2], points[len(points)-1]
	} else {
		lo, hi = points[above-1], points[above]
	}
	return max(0, (hi.value-lo.value)/float64(hi.count-lo.count))
}

// relativeGain is MarginalGain in units of the job's best observed
// throughput per worker (max T(k)/k). Jobs report throughput in their own
// units (samples, episodes, env steps per second), so raw gains of two jobs
// do not compare; relative to one worker's worth they do, and they agree
// with unprofiledGain: an unmeasured job is taken to scale linearly, a gain
// of 1.0 per worker. A job whose every observation is zero gains 0.
func relativeGain(points []point, n int32) float64 {
	if len(points) == 1 {
		return unprofiledGain
	}
	best := 0.0
	for _, p := range points[1:] {
		best = max(best, p.value/float64(p.count))
	}
	if best == 0 {
		return 0
	}
	return gainAt(points, n) / best
}
