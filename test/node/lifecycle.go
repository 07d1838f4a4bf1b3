package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/cluster"
)

// component is one of a member's processes, as it is started: kept in a
// file, so that a member lost and returned runs what it ran, whichever
// process brings it back.
type component struct {
	Name   string   `json:"name"`
	Binary string   `json:"binary"`
	Args   []string `json:"args"`
}

func (m Member) component(name, binary string, args ...string) component {
	binary, args = m.command(binary, args...)
	return component{Name: m.proc(name), Binary: binary, Args: args}
}

// plan is the file a member's components are kept in.
func (n *Node) plan(m Member) string {
	return filepath.Join(n.Dir, "members", m.Name+".json")
}

// startMember starts a member's containerd, imports the images into it,
// then starts its kubelet, kube-proxy and NetworkPolicy agent, and keeps
// their commands, containerd's first, for ReturnMember.
func (n *Node) startMember(ctx context.Context, m Member, b bins) error {
	containerd, err := n.containerd(m, b)
	if err != nil {
		return err
	}
	kubelet, err := n.kubelet(m, b)
	if err != nil {
		return err
	}
	proxy, err := n.proxy(m, b)
	if err != nil {
		return err
	}
	agent := n.policyAgent(m, b)
	plan, err := json.MarshalIndent([]component{containerd, kubelet, proxy, agent}, "", "  ")
	if err != nil {
		return err
	}
	if _, err := file(filepath.Dir(n.plan(m)), filepath.Base(n.plan(m)), string(plan)); err != nil {
		return err
	}
	began := time.Now()
	if err := n.start(containerd); err != nil {
		return err
	}
	if err := n.containerdUp(ctx, m); err != nil {
		return err
	}
	if err := n.importImages(ctx, m); err != nil {
		return err
	}
	logf("%s: containerd up, images in, after %s", m.Name, time.Since(began).Round(time.Millisecond))
	for _, c := range []component{kubelet, proxy, agent} {
		if err := n.start(c); err != nil {
			return err
		}
	}
	return nil
}

// start runs a component: as one of this process's, or, for a cluster
// another process started, as one that outlives this process too.
func (n *Node) start(c component) error {
	if n.attached {
		return cluster.StartDetached(n.Dir, c.Name, c.Binary, c.Args...)
	}
	return n.Run(c.Name, c.Binary, c.Args...)
}

// kill kills a component at once, as a crash of its machine would.
func (n *Node) kill(name string) error {
	if n.attached {
		return cluster.Kill(n.Dir, 0, name)
	}
	n.KillOne(name)
	return nil
}

// LoseMember takes a node away as a machine that dies takes it: its
// kubelet, kube-proxy and NetworkPolicy agent are killed first, so that
// nothing reports what follows, then its containers, containerd and
// containerd's shims; what lived in memory (its state folder) is gone,
// and it is cut off the network. The Node object stays, NotReady once the
// node lifecycle controller notices: DeleteNode does what a cloud's node
// controller does once the machine is gone.
func (n *Node) LoseMember(name string) error {
	m, err := n.mayAct(name)
	if err != nil {
		return err
	}
	errs := []error{n.kill(m.proc("kubelet")), n.kill(m.proc("kube-proxy")), n.kill(m.proc("kube-network-policies"))}
	killContainers(m)
	errs = append(errs, n.kill(m.proc("containerd")))
	killShims(m)
	unmountUnder(m.state)
	errs = append(errs, os.RemoveAll(m.state), m.cut())
	logf("%s is lost", m.Name)
	return errors.Join(errs...)
}

// ReturnMember brings a lost node back, as a machine that restarts: its
// network, containerd (with the images it had), then what its plan started
// after containerd: its kubelet, which registers the Node again if it was
// deleted, kube-proxy and the NetworkPolicy agent. It returns once the
// node is ready and, where the plan has an agent, the agent judges its
// packets.
func (n *Node) ReturnMember(ctx context.Context, name string) error {
	m, err := n.mayAct(name)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(n.plan(m))
	if err != nil {
		return fmt.Errorf("%s was not started here: %w", m.Name, err)
	}
	var plan []component
	if err := json.Unmarshal(data, &plan); err != nil || len(plan) == 0 || plan[0].Name != m.proc("containerd") {
		return fmt.Errorf("%s: not a node's plan, containerd first (%v)", n.plan(m), err)
	}
	if err := m.mend(); err != nil {
		return err
	}
	if err := n.start(plan[0]); err != nil {
		return err
	}
	if err := n.containerdUp(ctx, m); err != nil {
		return err
	}
	for _, c := range plan[1:] {
		if err := n.start(c); err != nil {
			return err
		}
	}
	if err := n.waitReady(ctx, m); err != nil {
		return err
	}
	if slices.ContainsFunc(plan, func(c component) bool { return c.Name == m.proc("kube-network-policies") }) {
		if err := n.enforcing(ctx, m); err != nil {
			return err
		}
	}
	logf("%s is back", m.Name)
	return nil
}

// DeleteNode waits until the node lifecycle controller has noticed that a
// node is gone (its Ready condition Unknown) and deletes its Node object,
// as a cloud's node controller does once the machine is gone. The pod
// garbage collector then deletes its pods, marked DisruptionTarget.
func (n *Node) DeleteNode(ctx context.Context, name string) error {
	if err := n.WaitLost(ctx, name); err != nil {
		return err
	}
	err := n.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// WaitLost waits until the node lifecycle controller has noticed that a
// node is gone: its Ready condition is no longer True.
func (n *Node) WaitLost(ctx context.Context, name string) error {
	return n.Wait(ctx, "node "+name+" taken for lost", 3*time.Minute, func(ctx context.Context) error {
		node, err := n.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return fmt.Errorf("node %s is still ready", name)
			}
		}
		return nil
	})
}

// mayAct is the member of that name, if this process may stop and start
// its parts.
func (n *Node) mayAct(name string) (Member, error) {
	if n.connected && !n.attached {
		return Member{}, errors.New("the cluster was started by another process: make node-stop and node-start act on its nodes")
	}
	return MemberNamed(name)
}

// killShims kills the containerd shims of a member, which outlive
// containerd: a machine that dies takes them with it.
func killShims(m Member) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	want := []byte(m.containerdSocket())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(bytes.SplitN(cmdline, []byte{0}, 2)[0]), "containerd-shim") {
			continue
		}
		if bytes.Contains(cmdline, want) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// readMembers finds the members of a cluster another process started by
// the Nodes it has.
func (n *Node) readMembers(ctx context.Context) error {
	nodes, err := n.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	n.Members = nil
	for i := 1; i <= MaxNodes; i++ {
		m := member(i)
		for _, node := range nodes.Items {
			if node.Name == m.Name {
				n.Members = append(n.Members, m)
			}
		}
	}
	if len(n.Members) == 0 {
		return errors.New("the cluster has none of the nodes a cluster here has")
	}
	return nil
}
