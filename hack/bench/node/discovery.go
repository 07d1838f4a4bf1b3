package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/trainfn/trainfn/test/node"
)

// hostsLine is what the elastic job's launcher prints each time its
// discover_hosts.sh lists other hosts (test/onnode/testdata/elastic-discovery.yaml).
var hostsLine = regexp.MustCompile(`(?m)^hosts: (.*?) ?$`)

// settle is how long after a pod's start, or its last change, a change is
// made: the kubelet syncs a pod on each of its own events (containers
// started, probes, status), which would deliver a ConfigMap change early.
const settle = 20 * time.Second

// lastHosts is how many hosts the launcher's last hosts line listed, or -1.
func lastHosts(ctx context.Context, n *node.Node, ns, pod string) int {
	out, err := n.Client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return -1
	}
	lines := hostsLine.FindAllStringSubmatch(string(out), -1)
	if len(lines) == 0 {
		return -1
	}
	return len(strings.Fields(lines[len(lines)-1][1]))
}

// launcherPod waits for the namespace's launcher pod to run.
func launcherPod(ctx context.Context, n *node.Node, ns string) (string, error) {
	var name string
	err := wait.PollUntilContextTimeout(ctx, poll, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := n.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if strings.Contains(p.Name, "-launcher") && p.Status.Phase == corev1.PodRunning {
				name = p.Name
				return true, nil
			}
		}
		return false, nil
	})
	return name, err
}

// scaleUp waits until the launcher lists the first count of workers, has
// scale make it three, and returns how long after that the launcher's
// discover_hosts.sh listed three.
func scaleUp(ctx context.Context, n *node.Node, ns string, scale func() error) (time.Duration, error) {
	pod, err := launcherPod(ctx, n, ns)
	if err != nil {
		return 0, fmt.Errorf("no launcher: %w", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, poll, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		return lastHosts(ctx, n, ns, pod) == 2, nil
	}); err != nil {
		return 0, fmt.Errorf("the launcher never listed 2 hosts: %w", err)
	}
	// A pod's first seconds are busy with its own events, each of which
	// has the kubelet sync it; the change must meet a settled pod.
	time.Sleep(settle)
	began := time.Now()
	if err := scale(); err != nil {
		return 0, err
	}
	if err := wait.PollUntilContextTimeout(ctx, poll, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		return lastHosts(ctx, n, ns, pod) == 3, nil
	}); err != nil {
		return 0, fmt.Errorf("the launcher never listed 3 hosts: %w", err)
	}
	return time.Since(began), nil
}

// configMapDelivery times the kubelet alone: a pod that mounts a
// ConfigMap and prints its file each time it changes; the ConfigMap is
// changed, and then changed again with an annotation of the pod touched
// right after, as trainfn's reconciler does. It returns how long each
// change took to reach the file.
func configMapDelivery(ctx context.Context, n *node.Node, ns, image string) (untouched, touched time.Duration, err error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "delivery"}, Data: map[string]string{"value": "0"}}
	if _, err := n.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return 0, 0, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "reader", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:      []string{"sh", "-c", `last=; while :; do v=$(cat /config/value); [ "$v" != "$last" ] && echo "value=$v" && last=$v; sleep 0.05; done`},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/config"}},
			}},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "delivery"}}}}},
		},
	}
	if _, err := n.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return 0, 0, err
	}
	sees := func(value string) error {
		return wait.PollUntilContextTimeout(ctx, poll, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			out, err := n.Client.CoreV1().Pods(ns).GetLogs("reader", &corev1.PodLogOptions{}).DoRaw(ctx)
			return err == nil && strings.HasSuffix(string(out), "value="+value+"\n"), nil
		})
	}
	if err := sees("0"); err != nil {
		return 0, 0, fmt.Errorf("the pod never read its ConfigMap: %w", err)
	}
	time.Sleep(settle)
	change := func(value string, touch bool) (time.Duration, error) {
		began := time.Now()
		patch := fmt.Sprintf(`{"data":{"value":%q}}`, value)
		if _, err := n.Client.CoreV1().ConfigMaps(ns).Patch(ctx, "delivery", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return 0, err
		}
		if touch {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"bench.trainfn.dev/touched":%q}}}`, value)
			if _, err := n.Client.CoreV1().Pods(ns).Patch(ctx, "reader", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				return 0, err
			}
		}
		if err := sees(value); err != nil {
			return 0, fmt.Errorf("value %s never reached the pod: %w", value, err)
		}
		took := time.Since(began)
		time.Sleep(settle)
		return took, nil
	}
	if untouched, err = change("1", false); err != nil {
		return 0, 0, err
	}
	touched, err = change("2", true)
	return untouched, touched, err
}
