package trainjob_test

import (
	"testing"

	"github.com/trainfn/trainfn/functions/functionstest"
)

// TestGolden renders every case of testdata/<version>/<case> through the
// front end, as users run trainfn: each input holds the TrainJob and its
// runtime.
func TestGolden(t *testing.T) {
	functionstest.Golden(t, "testdata")
}
