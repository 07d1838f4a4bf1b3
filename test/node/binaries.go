package node

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/trainfn/trainfn/test/cluster"
)

// bins are the paths of the programs a node runs.
type bins struct {
	kubelet, kubeProxy, coredns string
	networkPolicies             string // kube-network-policies, the NetworkPolicy agent
	containerd, runc            string
	cni                         string // the CNI plugins' folder
}

// binaries finds what hack/cluster-tools.sh built (the kubelet, kube-proxy
// and CoreDNS), what hack/tools.sh built (kube-network-policies) and what
// Debian's packages installed (containerd, runc, the CNI plugins), and
// says which is missing.
func binaries() (b bins, err error) {
	var missing []string
	built := func(name, builder string) string {
		p, err := cluster.Binary(name)
		if err != nil {
			missing = append(missing, name+" ("+builder+" builds it)")
		}
		return p
	}
	installed := func(name, pkg string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, name+" (Debian's "+pkg+")")
		}
		return p
	}
	b = bins{
		kubelet:         built("kubelet", "hack/cluster-tools.sh"),
		kubeProxy:       built("kube-proxy", "hack/cluster-tools.sh"),
		coredns:         built("coredns", "hack/cluster-tools.sh"),
		networkPolicies: built("kube-network-policies", "hack/tools.sh node"),
		containerd:      installed("containerd", "containerd"),
		runc:            installed("runc", "runc"),
		cni:             "/usr/lib/cni",
	}
	installed("ctr", "containerd")
	installed("iptables", "iptables")
	installed("ip", "iproute2")
	if _, err := os.Stat(filepath.Join(b.cni, "bridge")); err != nil {
		missing = append(missing, "the CNI bridge plugin (Debian's containernetworking-plugins)")
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("a node needs %s: run make node-tools", strings.Join(missing, ", "))
	}
	return b, nil
}

// readImages reads the images hack/node-images.sh built, by role.
func readImages(cache string) (map[string]string, error) {
	list := filepath.Join(cache, "images")
	f, err := os.Open(list)
	if err != nil {
		return nil, fmt.Errorf("the node's images are not built: run hack/node-images.sh (make node does): %w", err)
	}
	defer f.Close()
	images := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		role, image, ok := strings.Cut(strings.TrimSpace(scanner.Text()), " ")
		if ok {
			images[role] = image
		}
	}
	return images, scanner.Err()
}
