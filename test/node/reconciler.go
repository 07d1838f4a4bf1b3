package node

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// ScaleReconciler scales the installed reconciler's Deployment to replicas
// and waits until exactly that many of its pods run: at 0, to show what a
// job does with no controller.
func (n *Node) ScaleReconciler(ctx context.Context, replicas int) error {
	selector := "app.kubernetes.io/instance=" + ReconcilerRelease
	deployments := n.Client.AppsV1().Deployments(ReconcilerNamespace)
	list, err := deployments.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("no Deployment of %s in %s: InstallReconciler first", ReconcilerRelease, ReconcilerNamespace)
	}
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	for _, d := range list.Items {
		if _, err := deployments.Patch(ctx, d.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return n.Wait(ctx, fmt.Sprintf("%d reconciler pods", replicas), 2*time.Minute, func(ctx context.Context) error {
		pods, err := n.Client.CoreV1().Pods(ReconcilerNamespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running != replicas || len(pods.Items) != replicas {
			return fmt.Errorf("%d reconciler pods, %d of them running", len(pods.Items), running)
		}
		return nil
	})
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
