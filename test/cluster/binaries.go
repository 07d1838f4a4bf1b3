package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// AssetsEnv names a folder of control-plane binaries a user already has, as
// controller-runtime's envtest reads it; it is searched first.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// Components are the programs a cluster runs, as hack/cluster-tools.sh
// builds them.
var Components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl"}

// Binary finds a component: in KUBEBUILDER_ASSETS, then in the repository's
// .cache/bin, then on PATH.
func Binary(name string) (string, error) {
	var dirs []string
	if assets := os.Getenv(AssetsEnv); assets != "" {
		dirs = append(dirs, assets)
	}
	dirs = append(dirs, filepath.Join(repoRoot(), ".cache", "bin"))
	for _, dir := range dirs {
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s is not built: run hack/cluster-tools.sh (make e2e does), or point %s at a folder that has it", name, AssetsEnv)
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
