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
)

// containerd's files: its socket and state live while the node does, its
// root (the imported images) stays in the cache from one run to the next.
var (
	containerdState  = filepath.Join(StateDir, "containerd")
	containerdSocket = filepath.Join(StateDir, "containerd.sock")
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

// startContainerd writes containerd's and CNI's configuration and starts
// containerd, returning once it answers.
func (n *Node) startContainerd(ctx context.Context, b bins) error {
	cniDir := filepath.Join(n.Dir, "cni")
	if _, err := file(cniDir, "10-trainfn.conflist", cniConfig()); err != nil {
		return err
	}
	config, err := file(n.Dir, "containerd.toml", fmt.Sprintf(containerdConfig,
		filepath.Join(n.cache, "containerd"), containerdState, containerdSocket,
		n.Images["pause"], b.runc, b.cni, cniDir))
	if err != nil {
		return err
	}
	if err := n.Run("containerd", b.containerd, "--config", config, "--log-level", "warn"); err != nil {
		return err
	}
	return n.Wait(ctx, "containerd", time.Minute, func(ctx context.Context) error {
		_, err := ctr(ctx, "version")
		return err
	})
}

// importImages imports the images' archives into containerd (the node's
// own images.tar, and the release's OCI layouts of trainfn's images), unless
// those imported last time are these: a warm node reuses its images.
func (n *Node) importImages(ctx context.Context) error {
	version, err := os.ReadFile(filepath.Join(n.cache, "images.version"))
	if err != nil {
		return fmt.Errorf("the node's images are not built: run hack/node-images.sh: %w", err)
	}
	list, err := os.ReadFile(filepath.Join(n.cache, "archives"))
	if err != nil {
		return fmt.Errorf("the node's images are not built: run hack/node-images.sh: %w", err)
	}
	stamp := filepath.Join(n.cache, "containerd", "trainfn-images.version")
	if imported, _ := os.ReadFile(stamp); bytes.Equal(imported, version) {
		return nil
	}
	for _, name := range strings.Fields(string(list)) {
		archive := filepath.Join(n.cache, name)
		began := time.Now()
		if out, err := ctr(ctx, "images", "import", "--all-platforms", archive); err != nil {
			return fmt.Errorf("importing %s: %w: %s", archive, err, out)
		}
		logf("imported %s in %s", archive, time.Since(began).Round(time.Millisecond))
	}
	return os.WriteFile(stamp, version, 0o644)
}

// ctr runs containerd's client (binaries found it on PATH) on the node's
// containerd, in the namespace the kubelet's containers live in.
func ctr(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", containerdSocket, "--namespace", "k8s.io"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// removeContainers kills and removes every container of the node's
// containerd, if it still answers: a container's processes outlive its
// shim, so they must end before containerd does.
func removeContainers() {
	if _, err := os.Stat(containerdSocket); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := ctr(ctx, "tasks", "list", "--quiet")
	if err != nil {
		return
	}
	tasks := strings.Fields(out)
	for _, id := range tasks {
		_, _ = ctr(ctx, "tasks", "kill", "--signal", "SIGKILL", id)
	}
	for _, id := range tasks {
		for range 50 {
			if _, err := ctr(ctx, "tasks", "delete", id); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if out, err = ctr(ctx, "containers", "list", "--quiet"); err == nil {
		for _, id := range strings.Fields(out) {
			_, _ = ctr(ctx, "containers", "delete", id)
		}
	}
}

// Tag gives an image the node has one more name, as if an image of that
// name had just been pulled or imported: the kubelet sees it at once.
func (n *Node) Tag(ctx context.Context, image, name string) error {
	if out, err := ctr(ctx, "images", "tag", "--force", qualified(image), qualified(name)); err != nil {
		return fmt.Errorf("tagging %s as %s: %w: %s", image, name, err, out)
	}
	return nil
}

// Untag removes a name Tag gave; the image keeps its other names.
func (n *Node) Untag(ctx context.Context, name string) error {
	if out, err := ctr(ctx, "images", "remove", qualified(name)); err != nil {
		return fmt.Errorf("removing %s: %w: %s", name, err, out)
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

// RestartContainerd stops containerd and starts it again, as a runtime
// upgrade or crash does, and returns once it answers. The containers keep
// running under their shims meanwhile.
func (n *Node) RestartContainerd(ctx context.Context) error {
	if n.connected {
		return errors.New("the node was started by another process, which alone can restart its containerd")
	}
	if err := n.Restart("containerd", 10*time.Second); err != nil {
		return err
	}
	return n.Wait(ctx, "containerd, restarted", time.Minute, func(ctx context.Context) error {
		_, err := ctr(ctx, "version")
		return err
	})
}
