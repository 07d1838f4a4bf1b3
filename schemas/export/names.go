package export

import (
	"fmt"
	"strings"

	"cuelang.org/go/cue"
)

// schemasModule is the CUE module the embedded schemas belong to.
const schemasModule = "github.com/trainfn/trainfn/schemas/"

// packageNames gives each CUE package the prefix its definitions are
// published under: the API group reversed and the version, as Kubernetes
// names its OpenAPI definitions (io.k8s.api.core.v1.PodSpec), so names
// never collide across packages and read as users know them.
var packageNames = map[string]string{
	"k8s":               "io.k8s.api.core.v1",
	"kubeflow/v2beta1":  "org.kubeflow.v2beta1",
	"kubeflow/v1":       "org.kubeflow.v1",
	"kubeflow/v1alpha1": "org.kubeflow.v1alpha1",
	"kubeflow/v1alpha2": "org.kubeflow.v1alpha2",
	"diengine/v2alpha1": "org.opendilab.diengine.v2alpha1",
	"fn/v1alpha1":       "dev.trainfn.fn.v1alpha1",
	"trainer/v1alpha1":  "org.kubeflow.trainer.v1alpha1",
}

// apimachinery are the definitions of package k8s that Kubernetes
// publishes outside core/v1.
var apimachinery = map[string]string{
	"JobSchedulingConfiguration":             "io.k8s.api.batch.v1",
	"JobSpec":                                "io.k8s.api.batch.v1",
	"JobTemplateSpec":                        "io.k8s.api.batch.v1",
	"PodFailurePolicy":                       "io.k8s.api.batch.v1",
	"PodFailurePolicyOnExitCodesRequirement": "io.k8s.api.batch.v1",
	"PodFailurePolicyOnPodConditionsPattern": "io.k8s.api.batch.v1",
	"PodFailurePolicyRule":                   "io.k8s.api.batch.v1",
	"SuccessPolicy":                          "io.k8s.api.batch.v1",
	"SuccessPolicyRule":                      "io.k8s.api.batch.v1",
	"FieldsV1":                               "io.k8s.apimachinery.pkg.apis.meta.v1",
	"LabelSelector":                          "io.k8s.apimachinery.pkg.apis.meta.v1",
	"LabelSelectorRequirement":               "io.k8s.apimachinery.pkg.apis.meta.v1",
	"ManagedFieldsEntry":                     "io.k8s.apimachinery.pkg.apis.meta.v1",
	"ObjectMeta":                             "io.k8s.apimachinery.pkg.apis.meta.v1",
	"OwnerReference":                         "io.k8s.apimachinery.pkg.apis.meta.v1",
	"Time":                                   "io.k8s.apimachinery.pkg.apis.meta.v1",
	"Quantity":                               "io.k8s.apimachinery.pkg.api.resource",
	"IntOrString":                            "io.k8s.apimachinery.pkg.util.intstr",
}

// definitionName is the published name of the definition at sels in the
// CUE package importPath.
func definitionName(importPath string, sels []cue.Selector) (string, error) {
	// Import paths carry the module's major version: .../schemas/k8s@v0.
	path, _, _ := strings.Cut(importPath, "@")
	pkg := strings.TrimPrefix(path, schemasModule)
	prefix, ok := packageNames[pkg]
	if !ok {
		return "", fmt.Errorf("no schema name prefix for CUE package %q: add it to packageNames", importPath)
	}
	var parts []string
	for _, s := range sels {
		parts = append(parts, strings.TrimPrefix(s.String(), "#"))
	}
	name := strings.Join(parts, ".")
	if p, ok := apimachinery[name]; ok && pkg == "k8s" {
		prefix = p
	}
	return prefix + "." + name, nil
}
