package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerdConfig is containerd 1.6's configuration for the kubelet's CRI:
//   - the sandbox image is the node's own pause, since none can be pulled;
//   - restrict_oom_score_adj, because this machine's sandbox lacks
//     CAP_SYS_RESOURCE and runc may not lower a score;
//   - cgroupfs, as the kubelet's driver, and no systemd;
//   - the pods' network namespaces under the state folder, so that the
//     node's clean-up finds exactly its own.
const containerdConfig = `version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_unprivileged_ports = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = %q
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`

// containerd writes a member's containerd's and CNI's configuration and
// is its command. Its socket and state live while the member does, in its
// state folder; its root (the imported images) stays in the cache from
// one run to the next.
func (n *Node) containerd(m Member, b bins) (component, error) {
	cniDir := filepath.Join(m.dir(n.Dir), "cni")
	if _, err := file(cniDir, "10-trainfn.conflist", cniConfig(m)); err != nil {
		return component{}, err
	}
	config, err := file(m.dir(n.Dir), "containerd.toml", fmt.Sprintf(containerdConfig,
		m.containerdRoot(n.cache), filepath.Join(m.state, "containerd"), m.containerdSocket(),
		n.Images["pause"], b.runc, b.cni, cniDir))
	if err != nil {
		return component{}, err
	}
	return m.component("containerd", b.containerd, "--config", config, "--log-level", "warn"), nil
}

// containerdUp waits until a member's containerd serves its CRI, which
// also tells that it answers its own clients (ctr): it answers them before
// its CRI server is initialized, and a kubelet started meanwhile exits
// ("server is not initialized yet", found when a lost node came back).
func (n *Node) containerdUp(ctx context.Context, m Member) error {
	return n.Wait(ctx, m.proc("containerd"), time.Minute, func(ctx context.Context) error {
		return criServes(ctx, m.containerdSocket())
	})
}

// criServes asks the CRI at a socket for its version, as the kubelet does
// when it starts.
func criServes(ctx context.Context, socket string) error {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = runtimeapi.NewRuntimeServiceClient(conn).Version(ctx, &runtimeapi.VersionRequest{})
	return err
}

// importImages imports the images' archives into containerd (the node's
// own images.tar, and the release's OCI layouts of trainfn's images), unless
// those imported last time are these: a warm node reuses its images.
func (n *Node) importImages(ctx context.Context, m Member) error {
	version, err := os.ReadFile(filepath.Join(n.cache, "images.version"))
	if err != nil {
		return fmt.Errorf("the node's images are not built: run hack/node-images.sh: %w", err)
	}
	list, err := os.ReadFile(filepath.Join(n.cache, "archives"))
	if err != nil {
		return fmt.Errorf("the node's images are not built: run hack/node-images.sh: %w", err)
	}
	stamp := filepath.Join(m.containerdRoot(n.cache), "trainfn-images.version")
	if imported, _ := os.ReadFile(stamp); bytes.Equal(imported, version) {
		return nil
	}
	for _, name := range strings.Fields(string(list)) {
		archive := filepath.Join(n.cache, name)
		began := time.Now()
		if out, err := ctr(ctx, m, "images", "import", "--all-platforms", archive); err != nil {
			return fmt.Errorf("importing %s into %s: %w: %s", archive, m.Name, err, out)
		}
		logf("imported %s into %s in %s", archive, m.Name, time.Since(began).Round(time.Millisecond))
	}
	return os.WriteFile(stamp, version, 0o644)
}

// ctr runs containerd's client (binaries found it on PATH) on a member's
// containerd, in the namespace the kubelet's containers live in.
func ctr(ctx context.Context, m Member, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", m.containerdSocket(), "--namespace", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// removeContainers kills and removes every container of a member's
// containerd, if it still answers: a container's processes outlive its
// shim, so they must end before containerd does.
func removeContainers(m Member) {
	tasks := killContainers(m)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range tasks {
		for range 50 {
			if _, err := ctr(ctx, m, "tasks", "delete", id); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if out, err := ctr(ctx, m, "containers", "list", "--quiet"); err == nil {
		for _, id := range strings.Fields(out) {
			_, _ = ctr(ctx, m, "containers", "delete", id)
		}
	}
}

// killContainers kills every container of a member's containerd, if it
// still answers, and returns their tasks' ids.
func killContainers(m Member) []string {
	if _, err := os.Stat(m.containerdSocket()); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := ctr(ctx, m, "tasks", "list", "--quiet")
	if err != nil {
		return nil
	}
	tasks := strings.Fields(out)
	for _, id := range tasks {
		_, _ = ctr(ctx, m, "tasks", "kill", "--signal", "SIGKILL", id)
	}
	return tasks
}

// Tag gives an image every member has one more name, as if an image of
// that name had just been pulled or imported: the kubelets see it at once.
func (n *Node) Tag(ctx context.Context, image, name string) error {
	for _, m := range n.Members {
		if out, err := ctr(ctx, m, "images", "tag", "--force", qualified(image), qualified(name)); err != nil {
			return fmt.Errorf("tagging %s as %s on %s: %w: %s", image, name, m.Name, err, out)
		}
	}
	return nil
}

// Untag removes a name Tag gave; the image keeps its other names.
func (n *Node) Untag(ctx context.Context, name string) error {
	for _, m := range n.Members {
		if out, err := ctr(ctx, m, "images", "remove", qualified(name)); err != nil {
			return fmt.Errorf("removing %s from %s: %w: %s", name, m.Name, err, out)
		}
	}
	return nil
}

// qualified is an image's name as containerd keeps it: docker.io/ for a
// name without a registry, library/ for one without a repository's owner.
func qualified(image string) string {
	first, rest, found := strings.Cut(image, "/")
	switch {
	case !found:
		return "docker.io/library/" + image
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		return "docker.io/" + first + "/" + rest
	}
	return image
}

// RestartContainerd stops the first member's containerd and starts it
// again, as a runtime upgrade or crash does, and returns once it answers.
// The containers keep running under their shims meanwhile.
func (n *Node) RestartContainerd(ctx context.Context) error {
	if n.connected {
		return errors.New("the node was started by another process, which alone can restart its containerd")
	}
	m := n.Members[0]
	if err := n.Restart(m.proc("containerd"), 10*time.Second); err != nil {
		return err
	}
	return n.containerdUp(ctx, m)
}
