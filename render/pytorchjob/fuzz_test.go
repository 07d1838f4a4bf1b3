package pytorchjob_test

import (
	"testing"

	"github.com/trainfn/trainfn/render/rendertest"
	"github.com/trainfn/trainfn/schemas"
)

func FuzzPyTorchJobV1(f *testing.F) {
	rendertest.Fuzz(f, schemas.Kind{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob"})
}
