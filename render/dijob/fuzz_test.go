package dijob_test

import (
	"testing"

	"github.com/trainfn/trainfn/render/rendertest"
	"github.com/trainfn/trainfn/schemas"
)

func FuzzDIJobV2alpha1(f *testing.F) {
	rendertest.Fuzz(f, schemas.Kind{APIVersion: "diengine.opendilab.org/v2alpha1", Kind: "DIJob"})
}
