package functions_test

import (
	"testing"

	"github.com/trainfn/trainfn/functions/functionstest"
)

// TestGolden renders the front end's own cases: streams of several kinds
// and documents that are no job, the function config, collisions between
// documents. Each kind's cases are its package's.
func TestGolden(t *testing.T) {
	functionstest.Golden(t, "testdata")
}
