//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/test/sshtest"
	"github.com/trainfn/trainfn/test/testtool"
)

// kwok runs no containers, so the launcher's wait-for-workers container is
// run here instead, as its pod would run it, in a network, mount and UTS
// namespace of its own that stands in for the pod:
//   - /etc/mpi holds the ConfigMap items the pod mounts, read back from the
//     API server, with their modes;
//   - /etc/hostname is the pod's hostname;
//   - the worker pods' IPs, as kwok assigned them, are served by one real
//     sshd, whose sessions run /bin/sh as an image's root account does,
//     not this machine's root shell with its dotfiles (a bashrc that waits
//     on a lock would stall every probe);
//   - names resolve through /etc/hosts, written from the namespace's
//     EndpointSlices the way cluster DNS answers for headless Services (no
//     cluster DNS server runs here). A hostfile name the Services do not
//     list does not resolve, and the script fails.
//
// The script, its command and its environment are the pod's own; only ssh's
// identity file is added, through /etc/ssh/ssh_config as an image's would.
const podShell = `set -eu
dir=$1 sshd=$2 config=$3 log=$4
shift 4
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$dir/etc,workdir=$dir/work" /etc
hostname "$(cat /etc/hostname)"
ip link set lo up
while [ "$1" != -- ]; do ip addr add "$1/32" dev lo; shift; done
shift
"$sshd" -D -e -f "$config" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
"$@"
`

// waitContainer is the launcher's container that waits for the workers,
// if it has one: its main container, which runs launch.sh, or else an init
// container that runs the wait-for-workers script.
func waitContainer(pod *corev1.Pod) *corev1.Container {
	for i, c := range slices.Concat(pod.Spec.Containers, pod.Spec.InitContainers) {
		for _, script := range []string{mpi.LaunchKey, mpi.WaitForWorkersKey} {
			if slices.ContainsFunc(slices.Concat(c.Command, c.Args), func(arg string) bool { return strings.HasSuffix(arg, "/"+script) }) {
				if i < len(pod.Spec.Containers) {
					return &pod.Spec.Containers[i]
				}
				return &pod.Spec.InitContainers[i-len(pod.Spec.Containers)]
			}
		}
	}
	return nil
}

// waitCommand is what the container runs to wait for the workers: its own
// command, or, under launch.sh, the script launch.sh runs first (mpirun,
// which it runs then, is test/mpirun's to run).
func waitCommand(c *corev1.Container) []string {
	if slices.Contains(c.Command, mpi.ConfigDir+"/"+mpi.LaunchKey) {
		return []string{"/bin/sh", mpi.ConfigDir + "/" + mpi.WaitForWorkersKey}
	}
	return slices.Concat(c.Command, c.Args)
}

// checkWaitForWorkers runs a launcher pod's wait-for-workers container as
// described above and expects it to reach every worker of the hostfile.
func checkWaitForWorkers(t *testing.T, ns string, launcher *corev1.Pod) {
	if os.Geteuid() != 0 {
		t.Fatal("running a pod's container in namespaces of its own takes root (make e2e runs as root in CI)")
	}
	unshare := testtool.Find(t, "unshare")
	testtool.Find(t, "ip")
	container := waitContainer(launcher)
	env := containerEnv(t, container)

	dir := t.TempDir()
	etc := filepath.Join(dir, "etc")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "work"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(etc, "ssh"), 0o755))
	hostfile := projectConfigMap(t, ns, launcher, container, etc)
	require.NoError(t, os.WriteFile(filepath.Join(etc, "hostname"), []byte(launcher.Spec.Hostname+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(etc, "passwd"), imageAccounts(t), 0o644))

	names, err := endpointNames(context.Background(), ns)
	require.NoError(t, err)
	hosts := "127.0.0.1 localhost\n"
	var ips []string
	for ip, names := range names {
		hosts += ip + " " + strings.Join(names, " ") + "\n"
		ips = append(ips, ip)
	}
	slices.Sort(ips)
	require.NoError(t, os.WriteFile(filepath.Join(etc, "hosts"), []byte(hosts), 0o644))

	sshd := sshtest.New(t, t.TempDir(), "0.0.0.0", sshdPorts(env)...)
	require.NoError(t, os.WriteFile(filepath.Join(etc, "ssh", "ssh_config"),
		fmt.Appendf(nil, "Host *\n    IdentityFile %s\n", sshd.Identity), 0o644))

	args := []string{"--net", "--mount", "--uts", "--fork", "--kill-child", "/bin/sh", "-c", podShell, "pod",
		dir, sshd.SSHD, sshd.Config, sshd.Log}
	args = slices.Concat(args, ips, []string{"--"}, waitCommand(container))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, args...)
	cmd.Env = env
	// A hung script must not outlive the test: its whole process group
	// goes, sshd and ssh with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	sshdLog, _ := os.ReadFile(sshd.Log)
	require.NoError(t, err, "wait-for-workers of %s:\n%s\nsshd:\n%s\n/etc/hosts:\n%s", launcher.Name, out.String(), sshdLog, hosts)
	for _, host := range hostfileHosts(hostfile) {
		if strings.Split(host, ".")[0] == launcher.Spec.Hostname {
			continue
		}
		require.Contains(t, out.String(), "trainfn: "+host+" accepts SSH\n")
	}
	t.Logf("wait-for-workers of %s:\n%s", launcher.Name, strings.TrimSpace(out.String()))
}

// imageAccounts is this machine's /etc/passwd with root's login shell
// /bin/sh, which reads no startup file for a command, as in most images.
func imageAccounts(t *testing.T) []byte {
	passwd, err := os.ReadFile("/etc/passwd")
	require.NoError(t, err)
	lines := strings.Split(string(passwd), "\n")
	for i, line := range lines {
		fields := strings.Split(line, ":")
		if len(fields) == 7 && fields[0] == "root" {
			fields[6] = "/bin/sh"
			lines[i] = strings.Join(fields, ":")
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// projectConfigMap writes the items of the ConfigMap volume the container
// mounts at the MPI config folder below etc, as the kubelet projects them,
// and returns the hostfile.
func projectConfigMap(t *testing.T, ns string, pod *corev1.Pod, container *corev1.Container, etc string) string {
	var volume string
	for _, m := range container.VolumeMounts {
		if m.MountPath == mpi.ConfigDir {
			volume = m.Name
		}
	}
	require.NotEmpty(t, volume, "%s mounts nothing at %s", container.Name, mpi.ConfigDir)
	var source *corev1.ConfigMapVolumeSource
	for _, v := range pod.Spec.Volumes {
		if v.Name == volume {
			source = v.ConfigMap
		}
	}
	require.NotNil(t, source, "volume %s of %s is no ConfigMap", volume, pod.Name)
	cm, err := kube.Client.CoreV1().ConfigMaps(ns).Get(context.Background(), source.Name, metav1.GetOptions{})
	require.NoError(t, err)

	below, ok := strings.CutPrefix(path.Clean(mpi.ConfigDir), "/etc/")
	require.True(t, ok, "the stand-in pod only overlays /etc, and the MPI config is mounted at %s", mpi.ConfigDir)
	dir := filepath.Join(etc, below)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	items := source.Items
	if len(items) == 0 {
		for key := range cm.Data {
			items = append(items, corev1.KeyToPath{Key: key, Path: key})
		}
	}
	for _, item := range items {
		mode := int32(0o644)
		if source.DefaultMode != nil {
			mode = *source.DefaultMode
		}
		if item.Mode != nil {
			mode = *item.Mode
		}
		data, ok := cm.Data[item.Key]
		if !ok && item.Key == handoff.DiscoverHostsKey && elastic(t, ns, cm) {
			// The reconciler writes an elastic job's discovery script, and
			// none runs here; test/reconcile checks what it writes.
			continue
		}
		require.True(t, ok, "ConfigMap %s has no key %s", cm.Name, item.Key)
		require.NoError(t, os.WriteFile(filepath.Join(dir, item.Path), []byte(data), os.FileMode(mode)))
	}
	return cm.Data[mpi.HostfileKey]
}

// elastic tells whether the ConfigMap is an elastic job's: its workers'
// workload carries the elastic bounds.
func elastic(t *testing.T, ns string, cm *corev1.ConfigMap) bool {
	ctx := context.Background()
	name := handoff.WorkersName(cm.Labels[handoff.JobNameLabel])
	// The workers are a StatefulSet, or, under Kueue, an Indexed Job.
	var workers metav1.Object
	sts, err := kube.Client.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		job, jobErr := kube.Client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(jobErr) {
			return false
		}
		workers, err = job, jobErr
	} else {
		workers = sts
	}
	require.NoError(t, err)
	_, ok := workers.GetAnnotations()[handoff.ElasticWorkers]
	return ok
}

// containerEnv is the container's environment, but for values only a
// kubelet resolves. The wait gives up after 30 seconds whatever the
// container says, so that a failing test fails quickly.
func containerEnv(t *testing.T, c *corev1.Container) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Logf("%s: %s comes from %v, which only a kubelet resolves; left unset", c.Name, e.Name, e.ValueFrom)
			continue
		}
		env = append(env, e.Name+"="+e.Value)
	}
	return append(env, mpi.WaitTimeoutEnv+"=30")
}

// sshPort finds the ports a launcher's extra ssh arguments ("-p 2222")
// point at.
var sshPort = regexp.MustCompile(`(?:^|[\s=])-p\s*([0-9]+)`)

// sshdPorts are 22 and every port the environment's ssh arguments name:
// the port a user's workers listen on.
func sshdPorts(env []string) []string {
	ports := []string{"22"}
	for _, kv := range env {
		for _, m := range sshPort.FindAllStringSubmatch(kv, -1) {
			ports = append(ports, m[1])
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}
