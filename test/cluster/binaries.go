package cluster

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/trainfn/trainfn/test/testtool"
)

// AssetsEnv names a folder of control-plane binaries a user already has, as
// controller-runtime's envtest reads it; it is searched first.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// Binary finds a component: in KUBEBUILDER_ASSETS, else as
// hack/cluster-tools.sh built it. Never from PATH, which may hold any
// version of kubectl or etcd.
func Binary(name string) (string, error) {
	if assets := os.Getenv(AssetsEnv); assets != "" {
		if p := filepath.Join(assets, name); testtool.Executable(p) {
			return p, nil
		}
	}
	if p, ok := testtool.Built(name); ok {
		return p, nil
	}
	return "", fmt.Errorf("%s is not built: run hack/cluster-tools.sh (make e2e does), or point %s at a folder that has it", name, AssetsEnv)
}
