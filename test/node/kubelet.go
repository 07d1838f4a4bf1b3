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
`

// startKubelet starts the kubelet on the node's containerd, as the node's
// own user, so that the Node authorizer lets it read only what its pods
// use.
func (n *Node) startKubelet(b bins) error {
	// Pods resolve the cluster's names alone: the machine's resolver may
	// be a loopback address no pod can reach, and its options would be
	// merged into the pods'.
	resolv, err := file(n.Dir, "resolv.conf", "# the node's pods use cluster DNS alone\n")
	if err != nil {
		return err
	}
	config, err := file(n.Dir, "kubelet.yaml", fmt.Sprintf(kubeletConfig, IP, IP, Domain, resolv))
	if err != nil {
		return err
	}
	return n.Run("kubelet", b.kubelet,
		"--config", config,
		"--kubeconfig", n.KubeconfigOf(nodeUser),
		"--container-runtime-endpoint", "unix://"+containerdSocket,
		"--hostname-override", Name,
		"--node-ip", IP,
		"--root-dir", filepath.Join(n.Dir, "kubelet"),
		"--v", "1",
	)
}

// waitReady waits until the node is ready and may take pods: the kubelet
// has registered it, reports it ready, and the node lifecycle controller
// has lifted the not-ready taint.
func (n *Node) waitReady(ctx context.Context) error {
	return n.Wait(ctx, "the node", 3*time.Minute, func(ctx context.Context) error {
		node, err := n.Client.CoreV1().Nodes().Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				return fmt.Errorf("node %s is not ready: %s", Name, c.Message)
			}
		}
		if len(node.Spec.Taints) > 0 {
			return fmt.Errorf("node %s still has the taint %s", Name, node.Spec.Taints[0].Key)
		}
		return nil
	})
}
