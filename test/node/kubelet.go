package node

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeletConfig is the kubelet's configuration on this machine:
//   - cgroup v1 only, managed through cgroupfs, with no QoS hierarchy or
//     node allocatable of its own (the sandbox's cgroups may not be
//     reorganised);
//   - cluster DNS at CoreDNS on the node's address;
//   - no eviction and no image garbage collection for a full disk: the
//     images cannot be pulled again;
//   - its API on the node's address, with anonymous access allowed: the API
//     server calls it (logs, exec) without a client certificate. Only the
//     node's own pods and the machine can reach that address.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
address: %q
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 0
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
clusterDNS: [%q]
clusterDomain: %q
resolvConf: %q
evictionHard:
  memory.available: "0%%"
  nodefs.available: "0%%"
  imagefs.available: "0%%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMinimumGCAge: 87600h
serializeImagePulls: false
maxPods: 110
podLogsDir: %q
`

// kubelet is the kubelet's command on a member's containerd, as the
// member's own user, so that the Node authorizer lets it read only what
// its pods use. Its files are the member's own (its root, its serving
// certificate, its pods' logs, which a kubelet removes when no pod of its
// own owns them).
func (n *Node) kubelet(m Member, b bins) (component, error) {
	// Pods resolve the cluster's names alone: the machine's resolver may
	// be a loopback address no pod can reach, and its options would be
	// merged into the pods'.
	resolv, err := file(n.Dir, "resolv.conf", "# the node's pods use cluster DNS alone\n")
	if err != nil {
		return component{}, err
	}
	dir := m.dir(n.Dir)
	config, err := file(dir, "kubelet.yaml", fmt.Sprintf(kubeletConfig, m.IP, IP, Domain, resolv, filepath.Join(dir, "pod-logs")))
	if err != nil {
		return component{}, err
	}
	return m.component("kubelet", b.kubelet,
		"--config", config,
		"--kubeconfig", n.KubeconfigOf(nodeUser(m)),
		"--container-runtime-endpoint", "unix://"+m.containerdSocket(),
		"--hostname-override", m.Name,
		"--node-ip", m.IP,
		"--root-dir", filepath.Join(dir, "kubelet"),
		"--cert-dir", filepath.Join(dir, "kubelet-pki"),
		"--v", "1",
	), nil
}

// nodeUser is the user a member's kubelet signs in as.
func nodeUser(m Member) string { return "system:node:" + m.Name }

// waitReady waits until a member is ready and may take pods: its kubelet
// has registered it, reports it ready, and the node lifecycle controller
// has lifted its not-ready and unreachable taints.
func (n *Node) waitReady(ctx context.Context, m Member) error {
	return n.Wait(ctx, "node "+m.Name, 3*time.Minute, func(ctx context.Context) error {
		node, err := n.Client.CoreV1().Nodes().Get(ctx, m.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				return fmt.Errorf("node %s is not ready: %s", m.Name, c.Message)
			}
		}
		// An administrator's taints (out-of-service, say) are theirs to
		// lift: the lifecycle controller's are the node's readiness.
		for _, taint := range node.Spec.Taints {
			if taint.Key == corev1.TaintNodeNotReady || taint.Key == corev1.TaintNodeUnreachable {
				return fmt.Errorf("node %s still has the taint %s", m.Name, taint.Key)
			}
		}
		return nil
	})
}
