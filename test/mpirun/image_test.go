//go:build e2e

package mpirun

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/test/testtool"
)

// image stands in for the job's container image: what an MPI image ships,
// mpi-operator's base images (build/base/Dockerfile there) for a model.
// None of it is rendered by trainfn, and none of it reaches the machine:
// each container's mount namespace lays it over the machine's folders.
//
//   - /etc/ssh/sshd_config and a host key: Debian's openssh-server, with
//     what mpi-operator's images change: Port 2222, and StrictModes no (the
//     Secret volume's folder is world-writable, which StrictModes refuses);
//   - /etc/ssh/ssh_config: Port 2222, StrictHostKeyChecking no and
//     UserKnownHostsFile /dev/null (the .ssh folder is a read-only Secret);
//   - /run/sshd, sshd's privilege separation folder (root's sshd needs it);
//   - /etc/passwd and /etc/group: Debian's system accounts and mpiuser, uid
//     and gid 1000, home /home/mpiuser (useradd -m mpiuser);
//   - /home/mpiuser/.sshd_config: mpi-operator's configuration for an sshd
//     that mpiuser runs: a pid file in the home, the mounted key as host key,
//     StrictModes no, Port 2222;
//   - /usr/local/bin/mpirun: the image's MPI's mpirun, on PATH ahead of
//     whatever Debian's alternatives point /usr/bin/mpirun at;
//   - /usr/local/bin/mpi-hello: testdata/hello.c, built with that MPI's
//     mpicc;
//   - an empty /root, so that the key's mount point is made in the
//     container's layer, not on the machine.
type image struct {
	// dir holds one folder per top-level folder of the filesystem that the
	// image lays files over.
	dir string
	// workdir is the image's working directory (WORKDIR).
	workdir string
}

// user is an account of the image's /etc/passwd.
type user struct {
	name     string
	uid, gid int
	home     string
}

// users are the image's accounts a container may run as; root is the
// image's default user, and nobody, one of Debian's system accounts, the
// one the KubectlExec launcher's kubectl delivery runs as.
var users = []user{{"root", 0, 0, "/root"}, {"mpiuser", 1000, 1000, "/home/mpiuser"}, {"nobody", 65534, 65534, "/nonexistent"}}

// sshPort is where every sshd of the image listens, and where its ssh
// connects: mpi-operator's images' 2222, which a user may bind.
const sshPort = "2222"

// newImage builds the image for an MPI implementation, named by the suffix
// Debian gives its programs: openmpi or mpich.
func newImage(t *testing.T, mpi string) *image {
	t.Helper()
	img := &image{dir: t.TempDir(), workdir: "/home/mpiuser"}
	root, mpiuser := users[0], users[1]

	img.write(t, "usr/local/bin/mpirun", 0o755, root,
		"#!/bin/sh\nexec "+debianTool(t, "mpirun."+mpi)+` "$@"`+"\n")
	hello := filepath.Join(img.dir, "usr/local/bin/mpi-hello")
	out, err := exec.Command(debianTool(t, "mpicc."+mpi), "-o", hello, filepath.Join("testdata", "hello.c")).CombinedOutput()
	require.NoError(t, err, "mpicc.%s: %s", mpi, out)

	// As openssh-server's installation made it when the image was built.
	hostKey := filepath.Join(img.dir, "etc/ssh/ssh_host_ed25519_key")
	require.NoError(t, os.MkdirAll(filepath.Dir(hostKey), 0o755))
	out, err = exec.Command(testtool.Find(t, "ssh-keygen"), "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput()
	require.NoError(t, err, "ssh-keygen: %s", out)
	img.write(t, "etc/ssh/sshd_config", 0o644, root, `Port `+sshPort+`
HostKey /etc/ssh/ssh_host_ed25519_key
StrictModes no
KbdInteractiveAuthentication no
UsePAM yes
PrintMotd no
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
`)
	img.write(t, "etc/ssh/ssh_config", 0o644, root, `Host *
    SendEnv LANG LC_*
    HashKnownHosts yes
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    Port `+sshPort+`
`)
	img.mkdir(t, "run/sshd", 0o755, root)

	passwd, group := systemAccounts(t, "/etc/passwd"), systemAccounts(t, "/etc/group")
	for _, u := range []user{mpiuser} {
		passwd += u.name + ":x:" + strconv.Itoa(u.uid) + ":" + strconv.Itoa(u.gid) + "::" + u.home + ":/bin/sh\n"
		group += u.name + ":x:" + strconv.Itoa(u.gid) + ":\n"
	}
	img.write(t, "etc/passwd", 0o644, root, passwd)
	img.write(t, "etc/group", 0o644, root, group)
	img.mkdir(t, "root", 0o700, root)
	img.mkdir(t, "home/mpiuser", 0o755, mpiuser)
	img.write(t, "home/mpiuser/.sshd_config", 0o644, mpiuser, `PidFile /home/mpiuser/sshd.pid
HostKey /home/mpiuser/.ssh/id_rsa
StrictModes no
Port `+sshPort+`
`)
	return img
}

// addRsh lays an rsh server and client over the image, as an image that
// installs Debian's rsh-server, rsh-client and openbsd-inetd has them: the
// files hack/tools.sh e2e unpacked, the client under its own name, rsh,
// which it reads the host from when called by another.
func (img *image) addRsh(t *testing.T) {
	t.Helper()
	unpacked := testtool.Unpacked(t, "rsh")
	root := users[0]
	for from, to := range map[string]string{
		"usr/sbin/in.rshd":   "usr/sbin/in.rshd",
		"usr/sbin/inetd":     "usr/sbin/inetd",
		"usr/bin/netkit-rsh": "usr/bin/rsh",
		"etc/pam.d/rsh":      "etc/pam.d/rsh",
	} {
		info, err := os.Stat(filepath.Join(unpacked, from))
		require.NoError(t, err)
		content, err := os.ReadFile(filepath.Join(unpacked, from))
		require.NoError(t, err)
		img.write(t, to, info.Mode().Perm(), root, string(content))
	}
	// rshd names its peer by its address, and stops when the lookup fails
	// for a while rather than for good. Cluster DNS answers at once that
	// an address it does not know has no name; here the hosts file stands
	// in for cluster DNS, and with no name server to ask, only a resolver
	// that reads it alone answers the same.
	img.write(t, "etc/nsswitch.conf", 0o644, root, "passwd: files\ngroup: files\nshadow: files\nhosts: files\n")
}

// user is the image's account a container runs as: its securityContext's
// runAsUser, else the pod's, else the image's default; its group likewise,
// else the account's own, as container runtimes choose.
func (img *image) user(t *testing.T, spec corev1.PodSpec, c corev1.Container) user {
	t.Helper()
	var uid, gid *int64
	for _, sc := range []*corev1.SecurityContext{c.SecurityContext, podSecurity(spec)} {
		if sc == nil {
			continue
		}
		if uid == nil {
			uid = sc.RunAsUser
		}
		if gid == nil {
			gid = sc.RunAsGroup
		}
	}
	for _, u := range users {
		if int64(u.uid) == ptr.Deref(uid, 0) {
			if gid != nil {
				u.gid = int(*gid)
			}
			return u
		}
	}
	t.Fatalf("container %s runs as uid %d, which the image has no account for", c.Name, *uid)
	return user{}
}

func podSecurity(spec corev1.PodSpec) *corev1.SecurityContext {
	if spec.SecurityContext == nil {
		return nil
	}
	return &corev1.SecurityContext{RunAsUser: spec.SecurityContext.RunAsUser, RunAsGroup: spec.SecurityContext.RunAsGroup}
}

// env is the environment the image and the runtime give a container: a
// Debian image's PATH, and HOME from the image's account.
func (img *image) env(u user) []string {
	return []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + u.home}
}

// covers tells whether a path is under a folder the image lays files over,
// where making a mount point writes only to the container's layer.
func (img *image) covers(p string) bool {
	top, _, _ := strings.Cut(strings.TrimPrefix(path.Clean(p), "/"), "/")
	info, err := os.Stat(filepath.Join(img.dir, top))
	return top != "" && err == nil && info.IsDir()
}

func (img *image) mkdir(t *testing.T, dir string, mode os.FileMode, owner user) {
	full := filepath.Join(img.dir, dir)
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.Chown(full, owner.uid, owner.gid))
	require.NoError(t, os.Chmod(full, mode))
}

func (img *image) write(t *testing.T, file string, mode os.FileMode, owner user, content string) {
	full := filepath.Join(img.dir, file)
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte(content), 0o600))
	require.NoError(t, os.Chown(full, owner.uid, owner.gid))
	require.NoError(t, os.Chmod(full, mode))
}

// systemAccounts are the lines of the machine's passwd or group file that
// a Debian image of the same release has too: system accounts (sshd's
// among them) and nobody, not the machine's users.
func systemAccounts(t *testing.T, file string) string {
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 3 {
			continue
		}
		if id, err := strconv.Atoi(fields[2]); err == nil && (id < 1000 || id == 65534) {
			b.WriteString(sc.Text() + "\n")
		}
	}
	return b.String()
}

// debianTool is a program of the Debian packages hack/tools.sh e2e
// installs, by its own name, never an alternative's.
func debianTool(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("/usr/bin", name)
	if testtool.Executable(p) {
		return p
	}
	if os.Getenv(testtool.RequireEnv) != "" {
		t.Fatalf("%s is missing: run hack/tools.sh e2e", p)
	}
	t.Skipf("%s is missing: run hack/tools.sh e2e", p)
	return ""
}
