package mpijob_test

import (
	"testing"

	"github.com/trainfn/trainfn/render/rendertest"
	"github.com/trainfn/trainfn/schemas"
)

func FuzzMPIJobV2beta1(f *testing.F) {
	rendertest.Fuzz(f, schemas.Kind{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"})
}

func FuzzMPIJobV1(f *testing.F) {
	rendertest.Fuzz(f, schemas.Kind{APIVersion: "kubeflow.org/v1", Kind: "MPIJob"})
}

func FuzzMPIJobV1alpha1(f *testing.F) {
	rendertest.Fuzz(f, schemas.Kind{APIVersion: "kubeflow.org/v1alpha1", Kind: "MPIJob"})
}

func FuzzMPIJobV1alpha2(f *testing.F) {
	rendertest.Fuzz(f, schemas.Kind{APIVersion: "kubeflow.org/v1alpha2", Kind: "MPIJob"})
}
