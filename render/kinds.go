package render

import (
	"github.com/trainfn/trainfn/render/dijob"
	"github.com/trainfn/trainfn/render/mpijob"
	"github.com/trainfn/trainfn/render/pytorchjob"
	"github.com/trainfn/trainfn/render/trainjob"
)

// kinds are the job kinds trainfn expands, a line each. A kind's schema is
// the one embedded for its apiVersion and kind (schemas.For).
var kinds = Registry{
	Register("kubeflow.org/v2beta1", "MPIJob", mpijob.DecodeV2beta1),
	Register("kubeflow.org/v1", "MPIJob", mpijob.DecodeV1),
	Register("kubeflow.org/v1alpha1", "MPIJob", mpijob.DecodeV1alpha1),
	Register("kubeflow.org/v1alpha2", "MPIJob", mpijob.DecodeV1alpha2),
	Register("kubeflow.org/v1", "PyTorchJob", pytorchjob.DecodeV1),
	Register("diengine.opendilab.org/v2alpha1", "DIJob", dijob.DecodeV2alpha1),
	Register("trainer.kubeflow.org/v1alpha1", "TrainJob", trainjob.DecodeV1alpha1),
}
