package pytorchjob_test

import (
	"testing"

	"github.com/trainfn/trainfn/render/rendertest"
)

// TestGolden renders every case of testdata/<version>/<case> through the
// front end, as users run trainfn.
func TestGolden(t *testing.T) {
	rendertest.Golden(t, "testdata")
}
