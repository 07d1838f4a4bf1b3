package node

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// The release and namespace the reconciler is installed as: the names
// trainfn renders DIJobs to call by default.
const (
	ReconcilerNamespace = "trainfn-system"
	ReconcilerRelease   = "trainfn-reconciler"
)

// InstallReconciler installs trainfn's reconciler from its chart in repo
// with the real helm, running the node's trainfn image as a pod, with more
// values (key=value) if given, and waits until it is ready; an installed
// one is upgraded to this chart, image and values.
func (n *Node) InstallReconciler(ctx context.Context, helm, repo string, values ...string) error {
	image := n.Images["trainfn"]
	name, tag, _ := strings.Cut(image, ":")
	args := []string{"upgrade", "--install", ReconcilerRelease,
		filepath.Join(repo, "charts", "trainfn-reconciler"),
		"--kubeconfig", n.Kubeconfig,
		"--namespace", ReconcilerNamespace, "--create-namespace",
		"--set", "image.repository=" + name, "--set", "image.tag=" + tag,
		"--wait", "--timeout", "3m"}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	cmd := exec.CommandContext(ctx, helm, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm upgrade --install %s: %w: %s", ReconcilerRelease, err, out)
	}
	return nil
}
