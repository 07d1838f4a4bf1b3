package handoff

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxWorkers is the most workers a job has: an Indexed Job's limit on
// indexes, which every kind keeps to whatever runs its workers.
const MaxWorkers = 100000

// Bounds are the fewest and the most workers an elastic job runs with:
// the value of ElasticWorkers, which the render checks the job's worker
// count against and the reconciler keeps the workers within.
type Bounds struct {
	Min, Max int32
}

// String is the annotation's form of the bounds, MIN:MAX.
func (b Bounds) String() string { return fmt.Sprintf("%d:%d", b.Min, b.Max) }

// ParseBounds reads MIN:MAX, 1 <= MIN <= MAX <= MaxWorkers.
func ParseBounds(s string) (Bounds, error) {
	lo, hi, ok := strings.Cut(s, ":")
	low, err1 := strconv.ParseInt(lo, 10, 32)
	high, err2 := strconv.ParseInt(hi, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return Bounds{}, fmt.Errorf("must be MIN:MAX, two worker counts such as 2:8")
	}
	if low < 1 || low > high || high > MaxWorkers {
		return Bounds{}, fmt.Errorf("must satisfy 1 <= MIN <= MAX <= %d", MaxWorkers)
	}
	return Bounds{Min: int32(low), Max: int32(high)}, nil
}
