//go:build e2e

package mpirun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/trainfn/trainfn/test/netns"
	"github.com/trainfn/trainfn/test/rendered"
	"github.com/trainfn/trainfn/test/testtool"
)

// mountShell runs a container of a stand-in pod, as root, in a mount
// namespace of its own: the image's layers over the machine's folders with
// a writable layer that ends with the namespace (a container's root), the
// files the kubelet gives every container, and the container's volumes,
// read-only as the kubelet mounts Secrets and ConfigMaps. Nothing of the
// machine is written: every folder a mount point is made in is under an
// overlay (cluster.run checks).
//
// Arguments: the image's folder, the pod's folder, the working directory,
// then ro:SOURCE=TARGET or rw:SOURCE=TARGET for each volume mount, then --
// and the command.
const mountShell = `set -eu
image=$1 pod=$2 workdir=$3
shift 3
mount -t tmpfs -o mode=0755 container "$pod/rw"
# ip netns exec bound the pod's hosts file over /etc/hosts; the overlay on
# /etc would hide it, so keep hold of it first.
touch "$pod/rw/hosts"
mount --bind /etc/hosts "$pod/rw/hosts"
for layer in "$image"/*; do
	top=${layer##*/}
	mkdir "$pod/rw/$top" "$pod/rw/$top.work"
	mount -t overlay overlay -o "lowerdir=$layer:/$top,upperdir=$pod/rw/$top,workdir=$pod/rw/$top.work" "/$top"
done
mount --bind "$pod/rw/hosts" /etc/hosts
touch /etc/hostname
mount --bind "$pod/hostname" /etc/hostname
while [ "$1" != -- ]; do
	access=${1%%:*} mount=${1#*:}
	source=${mount%%=*} target=${mount#*=}
	mkdir -p "$target"
	mount --bind "$source" "$target"
	[ "$access" = rw ] || mount -o remount,bind,ro "$target"
	shift
done
shift
cd "$workdir"
exec "$@"
`

// cluster stands in for the cluster the output is applied to: it starts
// pods from the image, keeps every pod's hosts file to what cluster DNS
// would answer, and holds the job's SSH Secret as the user created it.
type cluster struct {
	t     *testing.T
	ctx   context.Context
	out   *rendered.Output
	image *image
	net   *netns.Network
	ip    string
	// secrets are the Secrets of the namespace: data by key, by name.
	secrets map[string]map[string][]byte

	started    map[*rendered.Pod]*pod
	running    map[*rendered.Pod]string
	containers []*container
	// workers are the workers' containers (sshd or rshd under work.sh),
	// which must outlive the launcher's mpirun.
	workers []*container
}

// pod is a started stand-in pod.
type pod struct {
	*rendered.Pod
	ns *netns.Pod
	// dir holds the pod's /etc/hostname, its volumes (volumes/<name>) and
	// the mount point of its containers' writable layers (rw).
	dir string
}

// newCluster stands in for a cluster whose nodes have the image of an MPI
// implementation (see newImage), and whose namespace holds the SSH Secret
// of the job named job, created as docs/ssh-keys.md tells users: <job>-ssh.
func newCluster(t *testing.T, ctx context.Context, out *rendered.Output, mpi, job string) *cluster {
	testtool.Find(t, "unshare")
	// First, as it skips the test without root, which the image needs too.
	net := netns.New(t)
	c := &cluster{t: t, ctx: ctx, out: out, net: net, ip: testtool.Find(t, "ip"), image: newImage(t, mpi),
		secrets: map[string]map[string][]byte{job + "-ssh": sshSecret(t, job)},
		started: map[*rendered.Pod]*pod{}, running: map[*rendered.Pod]string{}}
	t.Cleanup(func() {
		if t.Failed() {
			for _, ct := range c.containers {
				t.Logf("%s, container %s:\n%s", ct.pod.Hostname, ct.name, ct.output())
			}
		}
	})
	return c
}

// sshSecret is the job's SSH Secret, made as docs/ssh-keys.md tells users to: a
// key from `ssh-keygen -t ed25519 -N "" -C <job> -f id`, which kustomize's
// secretGenerator turns into <job>-ssh with ssh-privatekey=id and
// ssh-publickey=id.pub.
func sshSecret(t *testing.T, job string) map[string][]byte {
	dir := t.TempDir()
	keygen := exec.Command(testtool.Find(t, "ssh-keygen"), "-t", "ed25519", "-N", "", "-C", job, "-f", "id")
	keygen.Dir = dir
	out, err := keygen.CombinedOutput()
	require.NoError(t, err, "ssh-keygen: %s", out)
	data := map[string][]byte{}
	for key, file := range map[string]string{"ssh-privatekey": "id", "ssh-publickey": "id.pub"} {
		data[key], err = os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
	}
	return data
}

// start creates a pod: its network namespace, hostname and volumes. It is
// not ready, and its names do not resolve, until ready says so.
func (c *cluster) start(p *rendered.Pod) *pod {
	c.t.Helper()
	s := &pod{Pod: p, ns: c.net.Pod(p.Hostname), dir: c.t.TempDir()}
	// Runs before the namespace is deleted: whatever the pod's processes
	// left behind (sshd's sessions are sessions of their own, out of the
	// reach of a process group) goes with it.
	c.t.Cleanup(func() { c.killAll(s.ns) })
	require.NoError(c.t, os.Mkdir(filepath.Join(s.dir, "rw"), 0o755))
	require.NoError(c.t, os.WriteFile(filepath.Join(s.dir, "hostname"), []byte(p.Hostname+"\n"), 0o644))
	for _, v := range p.Spec.Volumes {
		c.project(s, v)
	}
	c.started[p] = s
	c.refresh()
	return s
}

// ready marks a pod ready: the names cluster DNS gives it now resolve.
func (c *cluster) ready(s *pod) {
	c.running[s.Pod] = s.ns.IP
	c.refresh()
}

// startWorker starts a worker pod's container (sshd, as rendered); without
// init containers it is ready at once.
func (c *cluster) startWorker(p *rendered.Pod) {
	c.t.Helper()
	s := c.start(p)
	c.ready(s)
	c.workers = append(c.workers, c.run(s, p.Spec.Containers[0].Name, nil))
}

// await waits for a launcher's container to end and returns how it did. A
// worker's container that ends first is an error at once: the launcher
// would only wait on, until the scenario runs out.
func (c *cluster) await(ct *container) error { return c.awaitWith(ct, false) }

// awaitLauncher is await for the launcher's own container, whose last act
// is to tell one worker that the job ended: that worker's ending, cleanly
// and saying so, is no error.
func (c *cluster) awaitLauncher(ct *container) error { return c.awaitWith(ct, true) }

func (c *cluster) awaitWith(ct *container, toldEnded bool) error {
	for {
		select {
		case <-ct.done:
			return ct.wait()
		case <-time.After(200 * time.Millisecond):
		}
		for _, w := range c.workers {
			if !w.finished() || toldEnded && w.endedByWord() {
				continue
			}
			return fmt.Errorf("%s's %s ended (%v) while %s ran:\n%s", w.pod.Hostname, w.name, w.wait(), ct.name, w.output())
		}
	}
}

// workerEnds is what work.sh prints when the launcher's word ends it.
const workerEnds = "trainfn: the job ended: this worker stops"

// told is what launch.sh prints once a worker took its word.
var told = regexp.MustCompile(`(?m)^trainfn: told (\S+) the attempt ended: (.*)$`)

// checkToldEnded requires the launcher, whose mpirun succeeded, to have told
// exactly one worker that the job ended, over the job's own remote shell,
// and that worker, alone, to stop with exit 0 within seconds: with the
// workers' Job's successPolicy, that is what ends the job and stops the
// other workers on a cluster. Here there is no Job controller, so the
// others run on.
func (c *cluster) checkToldEnded(launcherOutput string) {
	t := c.t
	t.Helper()
	m := told.FindStringSubmatch(launcherOutput)
	require.NotNil(t, m, "the launcher told no worker that the job ended:\n%s", launcherOutput)
	require.Equal(t, "ended", m[2], "the launcher's word")
	hostname, _, _ := strings.Cut(m[1], ".")
	var stopped *container
	for _, w := range c.workers {
		if w.pod.Hostname == hostname {
			stopped = w
		}
	}
	require.NotNil(t, stopped, "the launcher told %s, no worker of the job", m[1])
	select {
	case <-stopped.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was told the job ended and runs on 10s later:\n%s", hostname, stopped.output())
	}
	require.NoError(t, stopped.wait(), stopped.output())
	assert.Contains(t, stopped.output(), workerEnds)
	for _, w := range c.workers {
		if w != stopped {
			assert.False(t, w.finished(), "%s, which was not told, ended: %v\n%s", w.pod.Hostname, w.err, w.output())
		}
	}
}
func (c *cluster) refresh() {
	for p, s := range c.started {
		require.NoError(c.t, s.ns.SetHosts(c.out.Hosts(p, s.ns.IP, c.running)))
	}
}

// project writes a volume's files as the kubelet projects a ConfigMap or
// Secret volume, or a projected volume of them: each item with its mode
// (else the volume's defaultMode, else 0644), owned by root, in a folder
// anyone may write to (the kubelet's emptyDir beneath, which is why images
// turn sshd's StrictModes off). The kubelet links the files to a folder of
// their own; ssh follows links, so plain files stand in.
func (c *cluster) project(s *pod, v corev1.Volume) {
	t := c.t
	dir := filepath.Join(s.dir, "volumes", v.Name)
	switch {
	case v.ConfigMap != nil:
		c.write(dir, v.Name, c.configMap(v.Name, v.ConfigMap.Name), v.ConfigMap.Items, v.ConfigMap.DefaultMode)
	case v.EmptyDir != nil:
		// Empty, and writable by any user, as the kubelet makes it.
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.Chmod(dir, 0o777))
	case v.Secret != nil:
		c.write(dir, v.Name, c.secret(v.Name, v.Secret.SecretName), v.Secret.Items, v.Secret.DefaultMode)
	case v.Projected != nil:
		for _, source := range v.Projected.Sources {
			switch {
			case source.ConfigMap != nil:
				c.write(dir, v.Name, c.configMap(v.Name, source.ConfigMap.Name), source.ConfigMap.Items, v.Projected.DefaultMode)
			case source.Secret != nil:
				c.write(dir, v.Name, c.secret(v.Name, source.Secret.Name), source.Secret.Items, v.Projected.DefaultMode)
			default:
				t.Fatalf("projected volume %s of %s has a source this test does not stand in for", v.Name, s.Hostname)
			}
		}
	default:
		t.Fatalf("volume %s of %s is of a kind this test does not stand in for", v.Name, s.Hostname)
	}
}

// configMap is the data of the output's ConfigMap name, which volume
// mounts.
func (c *cluster) configMap(volume, name string) map[string][]byte {
	cm := c.out.ConfigMap(name)
	require.NotNil(c.t, cm, "volume %s: the output has no ConfigMap %s", volume, name)
	require.Empty(c.t, cm.BinaryData, "ConfigMap %s: binaryData is not stood in for", cm.Name)
	data := map[string][]byte{}
	for k, val := range cm.Data {
		data[k] = []byte(val)
	}
	return data
}

// secret is the data of the Secret name the user was told to create,
// which volume mounts.
func (c *cluster) secret(volume, name string) map[string][]byte {
	data, ok := c.secrets[name]
	require.True(c.t, ok, "volume %s: Secret %s is none the user was told to create", volume, name)
	return data
}

// write writes the items of data into the volume's folder dir, all of
// data when items names none.
func (c *cluster) write(dir, volume string, data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32) {
	t := c.t
	if len(items) == 0 {
		for k := range data {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o777))
	for _, item := range items {
		content, ok := data[item.Key]
		require.True(t, ok, "volume %s has no key %s", volume, item.Key)
		mode := int32(0o644)
		if defaultMode != nil {
			mode = *defaultMode
		}
		if item.Mode != nil {
			mode = *item.Mode
		}
		file := filepath.Join(dir, item.Path)
		require.NoError(t, os.WriteFile(file, content, 0o600))
		require.NoError(t, os.Chown(file, 0, 0))
		// Set after writing: the umask would have its way with WriteFile's.
		require.NoError(t, os.Chmod(file, os.FileMode(mode)))
	}
}

// run starts a container of a started pod, or, given argv, runs argv in it
// as `kubectl exec` does: in the pod's network namespace, with the image
// and the container's volumes, as the container's user, with its
// environment.
func (c *cluster) run(s *pod, name string, argv []string) *container {
	t := c.t
	t.Helper()
	spec := s.Container(t, name)
	u := c.image.user(t, s.Spec, spec)
	env := s.Env(t, spec, c.image.env(u))
	if argv == nil {
		argv = s.Argv(t, spec, env)
	}
	if u.uid != 0 {
		argv = append([]string{testtool.Find(t, "setpriv"), "--reuid=" + strconv.Itoa(u.uid),
			"--regid=" + strconv.Itoa(u.gid), "--init-groups", "--"}, argv...)
	}
	workdir := spec.WorkingDir
	if workdir == "" {
		workdir = c.image.workdir
	}
	// A PID namespace of its own, with its /proc, as containerd gives a
	// container: what the command leaves running (a server's sessions, an
	// ssh connection kept for later sessions) ends when it does, and MPI's
	// shared-memory transports find their peers by their PIDs.
	args := []string{testtool.Find(t, "unshare"), "--mount", "--propagation", "private", "--pid", "--fork", "--kill-child", "--mount-proc", "--",
		"/bin/sh", "-c", mountShell, "pod", c.image.dir, s.dir, workdir}
	for _, m := range spec.VolumeMounts {
		require.Empty(t, m.SubPath, "%s: subPath is not stood in for", name)
		require.True(t, c.image.covers(m.MountPath),
			"%s mounts %s outside the folders the image overlays: the mount point would be made on the machine", name, m.MountPath)
		// The kubelet mounts ConfigMaps and Secrets read-only, emptyDirs
		// as the mount asks.
		access := "ro"
		if v := s.volume(m.Name); v != nil && v.EmptyDir != nil && !m.ReadOnly {
			access = "rw"
		}
		args = append(args, access+":"+filepath.Join(s.dir, "volumes", m.Name)+"="+m.MountPath)
	}
	args = append(append(args, "--"), argv...)

	ct := &container{ctx: c.ctx, pod: s, name: name, done: make(chan struct{})}
	ct.cmd = s.ns.Command(c.ctx, args...)
	ct.cmd.Env = env
	ct.cmd.Stdout, ct.cmd.Stderr = &ct.out, &ct.out
	// Whatever keeps the output open once the command is killed must not
	// keep the test waiting.
	ct.cmd.WaitDelay = 5 * time.Second
	require.NoError(t, ct.cmd.Start())
	c.containers = append(c.containers, ct)
	go func() {
		defer close(ct.done)
		ct.err = ct.cmd.Wait()
	}()
	// The scenario's context ends before cleanups run: this only reaps.
	t.Cleanup(func() { <-ct.done })
	return ct
}

// volume is the pod's volume of that name, nil when it has none.
func (s *pod) volume(name string) *corev1.Volume {
	for i := range s.Spec.Volumes {
		if s.Spec.Volumes[i].Name == name {
			return &s.Spec.Volumes[i]
		}
	}
	return nil
}

// killAll kills every process left in a pod's network namespace.
func (c *cluster) killAll(ns *netns.Pod) {
	out, _ := exec.Command(c.ip, "netns", "pids", ns.Name).Output()
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// container is a running container of a stand-in pod.
type container struct {
	ctx  context.Context
	pod  *pod
	name string
	cmd  *exec.Cmd
	out  testtool.Buffer
	done chan struct{}
	err  error
}

// wait waits for the container to end and returns how it did; killed at
// the scenario's end, it says so.
func (ct *container) wait() error {
	<-ct.done
	if ct.err != nil && ct.ctx.Err() != nil {
		return fmt.Errorf("%w (the scenario's %s ran out)", ct.err, scenario)
	}
	return ct.err
}

func (ct *container) finished() bool {
	select {
	case <-ct.done:
		return true
	default:
		return false
	}
}

func (ct *container) output() string { return ct.out.String() }

// checkToldNothing requires a launcher under cleanPodPolicy None to have
// told no worker anything, and every worker to run on a while after.
func (c *cluster) checkToldNothing(launcherOutput string) {
	t := c.t
	t.Helper()
	assert.NotRegexp(t, told, launcherOutput, "cleanPodPolicy None: the launcher must tell the workers nothing")
	time.Sleep(time.Second)
	for _, w := range c.workers {
		assert.False(t, w.finished(), "%s ended under cleanPodPolicy None: %v\n%s", w.pod.Hostname, w.err, w.output())
	}
}

// endedByWord says whether a worker's container ended cleanly because the
// launcher told it the job ended.
func (ct *container) endedByWord() bool {
	return ct.finished() && ct.err == nil && strings.Contains(ct.output(), workerEnds)
}

// job is what the test reads of a manifest of testdata itself: the job's
// name, and the slots it asks for on each worker (1 unless it says).
type job struct {
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		SlotsPerWorker *int `json:"slotsPerWorker"`
	} `json:"spec"`
}

func readJob(t *testing.T, manifest string) (name string, slots int, apiVersion string) {
	f, err := os.Open(filepath.Join("testdata", manifest))
	require.NoError(t, err)
	defer f.Close()
	var j job
	require.NoError(t, yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&j))
	if j.Spec.SlotsPerWorker == nil {
		return j.Metadata.Name, 1, j.APIVersion
	}
	return j.Metadata.Name, *j.Spec.SlotsPerWorker, j.APIVersion
}
