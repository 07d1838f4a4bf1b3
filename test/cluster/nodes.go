package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodCIDR is where kwok takes pod IPs from, unless Options.PodCIDR says.
const PodCIDR = "10.244.0.0/16"

// fakeNodeAnnotation marks the nodes kwok plays the kubelet of.
const fakeNodeAnnotation = "kwok.x-k8s.io/node"

// nodeCapacity is what every fake node offers; GPUs because users' jobs
// ask for them.
var nodeCapacity = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("64"),
	corev1.ResourceMemory: resource.MustParse("512Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
	"nvidia.com/gpu":      resource.MustParse("8"),
}

// controlPlaneRole is the label and taint kubeadm gives a control-plane
// node, which keep pods off it unless they tolerate the taint.
const controlPlaneRole = "node-role.kubernetes.io/control-plane"

// addNodes registers fake nodes, as kubelets do, n of them for any pod and,
// if controlPlane, one more as kubeadm marks a control-plane node, each with
// the default capacity and resources; and waits until the scheduler may use
// them: kwok has reported them ready and the node lifecycle controller has
// lifted the not-ready taint.
func (c *Cluster) addNodes(ctx context.Context, n int, controlPlane bool, resources corev1.ResourceList) error {
	capacity := maps.Clone(nodeCapacity)
	maps.Copy(capacity, resources)
	var nodes []*corev1.Node
	for i := range n {
		nodes = append(nodes, fakeNode(fmt.Sprintf("kwok-node-%d", i), capacity))
	}
	if controlPlane {
		node := fakeNode("kwok-control-plane", capacity)
		node.Labels[controlPlaneRole] = ""
		node.Spec.Taints = []corev1.Taint{{Key: controlPlaneRole, Effect: corev1.TaintEffectNoSchedule}}
		nodes = append(nodes, node)
	}
	return c.register(ctx, nodes)
}

// AddNode registers one more fake node, with the default capacity and
// resources, and waits until the scheduler may use it: room that a test
// adds while pods wait for it.
func (c *Cluster) AddNode(ctx context.Context, name string, resources corev1.ResourceList) error {
	capacity := maps.Clone(nodeCapacity)
	maps.Copy(capacity, resources)
	return c.register(ctx, []*corev1.Node{fakeNode(name, capacity)})
}

// register creates the nodes and waits until every node of the cluster is
// ready and untainted.
func (c *Cluster) register(ctx context.Context, nodes []*corev1.Node) error {
	registered := map[string][]corev1.Taint{}
	for _, node := range nodes {
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("registering node %s: %w", node.Name, err)
		}
		registered[node.Name] = node.Spec.Taints
	}
	return c.Wait(ctx, "fake nodes", 2*time.Minute, func(ctx context.Context) error {
		for name := range registered {
			node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !ready(*node) {
				return fmt.Errorf("node %s is not ready", node.Name)
			}
			for _, taint := range node.Spec.Taints {
				if !slices.ContainsFunc(registered[node.Name], func(t corev1.Taint) bool { return t.MatchTaint(&taint) }) {
					return fmt.Errorf("node %s still has the taint %s", node.Name, taint.Key)
				}
			}
			if _, ok := node.Status.Allocatable["nvidia.com/gpu"]; !ok {
				return fmt.Errorf("node %s offers no GPUs", node.Name)
			}
		}
		return nil
	})
}

// fakeNode is a node for kwok to play the kubelet of.
func fakeNode(name string, capacity corev1.ResourceList) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{fakeNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

func ready(node corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
