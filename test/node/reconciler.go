package node

import (
	"context"
	"errors"
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
// with the real helm, running the node's trainfn-reconciler image as a
// pod, with more values (key=value) if given, and waits until it is ready;
// an installed one is upgraded to this chart, image and values.
func (n *Node) InstallReconciler(ctx context.Context, helm, repo string, values ...string) error {
	image := n.Images["trainfn-reconciler"]
	if image == "" {
		return errors.New("the node has no trainfn-reconciler image: run hack/node-images.sh (make node-tools does)")
	}
	args := append([]string{"upgrade", "--install", ReconcilerRelease,
		"--kubeconfig", n.Kubeconfig,
		"--namespace", ReconcilerNamespace, "--create-namespace",
		"--wait", "--timeout", "3m"},
		reconcilerChartArgs(repo, image, values)...)
	cmd := exec.CommandContext(ctx, helm, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm upgrade --install %s: %w: %s", ReconcilerRelease, err, out)
	}
	return nil
}

// reconcilerChartArgs are helm's chart and value arguments for running
// image. The tag is set as a string: an abbreviated commit hash can be all
// digits, which --set would read as a number the chart's schema refuses.
func reconcilerChartArgs(repo, image string, values []string) []string {
	name, tag := image, "latest"
	// The tag follows the last colon, after any registry port's.
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		name, tag = image[:i], image[i+1:]
	}
	args := []string{filepath.Join(repo, "charts", "trainfn-reconciler"),
		"--set", "image.repository=" + name, "--set-string", "image.tag=" + tag}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	return args
}
