#!/usr/bin/env bash
# Builds the images the node runs, without a registry or a container
# engine, into .cache/node/images.tar, and lists them by role in
# .cache/node/images ("ROLE IMAGE" a line):
#   - a Debian root file system (debootstrap, cached) with what
#     mpi-operator's base image adds (build/base/Dockerfile there): sshd and
#     ssh on port 2222 without host key checks, mpiuser (uid 1000) with
#     the .sshd_config an unprivileged sshd reads; Open MPI, MPICH, torch;
#   - on it, mpi-operator's pi images by their own names (the examples
#     run unchanged), the torch image with the test programs, the
#     kubectl-delivery image;
#   - trainfn's image and trainfn-reconciler's: each its static binary
#     alone, run as non-root, as the Dockerfile builds them; and the pod
#     sandbox's pause image.
# The archive is rebuilt when this script, its files, trainfn's sources or
# the tools change; the file system only when its package list does.
# `hack/node-images.sh rootfs` builds the file system alone: .ci/run does,
# while Go compiles.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
node=$root/.cache/node
bin=$root/.cache/bin
mkdir -p "$node"

packages=openssh-server,openssh-client,openmpi-bin,mpich,python3-torch,python3-numpy,rsh-server,rsh-client,openbsd-inetd,netbase,procps,iproute2
suite=bookworm
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}

rootfs=$node/rootfs
# build_rootfs FOLDER: Debian, with what mpi-operator's base image adds to it.
build_rootfs() {
	local dir=$1 port=2222
	debootstrap --variant=minbase --include="$packages" "$suite" "$dir" "$mirror" >"$node/debootstrap.log" 2>&1 ||
		{ tail -20 "$node/debootstrap.log" >&2; return 1; }
	sed -i "s/[ #]\(.*StrictHostKeyChecking \).*/ \1no/g" "$dir/etc/ssh/ssh_config"
	echo "    UserKnownHostsFile /dev/null" >>"$dir/etc/ssh/ssh_config"
	sed -i "s/[ #]\(.*Port \).*/ \1$port/g" "$dir/etc/ssh/ssh_config"
	sed -i "s/#\(StrictModes \).*/\1no/g" "$dir/etc/ssh/sshd_config"
	sed -i "s/#\(Port \).*/\1$port/g" "$dir/etc/ssh/sshd_config"
	# In the image: on this machine, /var/run would be the machine's /run.
	chroot "$dir" mkdir -p /var/run/sshd
	chroot "$dir" useradd -m mpiuser
	install -o 1000 -g 1000 -m 644 hack/node/image/sshd_config "$dir/home/mpiuser/.sshd_config"
	echo "Port $port" >>"$dir/home/mpiuser/.sshd_config"
	# The host keys stay, as a docker build leaves them; what is not
	# needed at run time goes.
	rm -rf "$dir"/var/cache/apt/* "$dir"/var/lib/apt/lists/* \
		"$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/locale/*
}
want="$suite $packages $( (declare -f build_rootfs; cat hack/node/image/sshd_config) | sha256sum | cut -d' ' -f1)"
# One run at a time builds it; another waits for that one's.
exec 9>"$node/rootfs.lock"
flock 9
if [[ "$(cat "$node/rootfs.version" 2>/dev/null)" != "$want" ]]; then
	echo "node-images: debootstrap $suite with $packages (minutes, once)" >&2
	# A debootstrap cut short leaves the half-built tree's /proc mounted.
	awk -v dir="$rootfs.tmp/" 'index($2, dir) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount
	rm -rf "$rootfs" "$rootfs.tmp"
	build_rootfs "$rootfs.tmp"
	mv "$rootfs.tmp" "$rootfs"
	echo "$want" >"$node/rootfs.version"
fi
flock -u 9
if [[ ${1:-} == rootfs ]]; then
	exit 0
fi

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
kube=$(cd hack/tools && go list -m -f '{{.Version}}' k8s.io/kubernetes)
inputs=$( (cat "$0" hack/node/image/* "$node/rootfs.version"; git ls-files -s cmd render reconciler schemas functions go.mod go.sum test/node/pause test/torchrun/testdata hack/tools/nodeimage; git diff HEAD -- cmd render reconciler schemas functions test/node/pause hack/tools/nodeimage; sha256sum "$bin/kubectl") | sha256sum | cut -d' ' -f1)
if [[ -f $node/images.tar && "$(cat "$node/images.version" 2>/dev/null)" == "$inputs" ]]; then
	exit 0
fi
echo "node-images: packing the images" >&2

layers=$node/layers
rm -rf "$layers"
# A layer's folder replaces a symbolic link of the layers below: no layer
# has /bin, which Debian links to /usr/bin.
mkdir -p "$layers"/{openmpi,mpich,torch,trainfn,trainfn-reconciler,pause} "$layers/delivery/usr/bin"

# Debian's MPI compilers on this machine build against the same release's
# libraries as the image's.
install -d -o 1000 -g 1000 "$layers/openmpi/home/mpiuser" "$layers/mpich/home/mpiuser"
mpicc.openmpi -O2 -o "$layers/openmpi/home/mpiuser/pi" hack/node/image/pi.c
mpicc.mpich -O2 -o "$layers/mpich/home/mpiuser/pi" hack/node/image/pi.c
chown 1000:1000 "$layers"/{openmpi,mpich}/home/mpiuser/pi
# The MPICH image's mpirun is MPICH's: Debian's alternatives, switched as
# update-alternatives would. (A link elsewhere on PATH would not do: Hydra
# looks for its proxy beside the mpirun it was started as.)
mkdir -p "$layers/mpich/etc/alternatives"
for tool in mpirun mpiexec; do
	ln -s "/usr/bin/$tool.mpich" "$layers/mpich/etc/alternatives/$tool"
done

mkdir -p "$layers/torch/workspace"
install -m 644 test/torchrun/testdata/allreduce.py hack/node/image/membership.py "$layers/torch/workspace/"

# Readable and runnable by all: the rendered delivery container copies it
# as nobody (uid 65534), and the copy keeps the mode, so that the launcher
# runs it whatever its user.
install -m 0755 "$bin/kubectl" "$layers/delivery/usr/bin/kubectl"

# trainfn's image and the reconciler's, each a static binary on what
# distroless's static base gives it.
for cmd in trainfn trainfn-reconciler; do
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$layers/$cmd/$cmd" "./cmd/$cmd"
	mkdir -p "$layers/$cmd/etc" && chmod 1777 "$(mkdir -p "$layers/$cmd/tmp" && echo "$layers/$cmd/tmp")"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$layers/$cmd/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$layers/$cmd/etc/group"
done
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$layers/pause/pause" ./test/node/pause

path=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cat >"$node/images.json" <<JSON
[
 {"refs": ["docker.io/mpioperator/mpi-pi:openmpi"], "layers": ["$rootfs", "$layers/openmpi"], "env": ["$path"], "workingDir": "/home/mpiuser", "cmd": ["bash"]},
 {"refs": ["docker.io/mpioperator/mpi-pi:mpich"], "layers": ["$rootfs", "$layers/mpich"], "env": ["$path"], "workingDir": "/home/mpiuser", "cmd": ["bash"]},
 {"refs": ["trainfn.local/torch:$suite"], "layers": ["$rootfs", "$layers/torch"], "env": ["$path"], "workingDir": "/workspace", "cmd": ["bash"]},
 {"refs": ["trainfn.local/kubectl-delivery:$kube"], "layers": ["$rootfs", "$layers/delivery"], "env": ["$path"], "cmd": ["bash"]},
 {"refs": ["trainfn.local/trainfn:$version"], "layers": ["$layers/trainfn"], "user": "65532:65532", "entrypoint": ["/trainfn"]},
 {"refs": ["trainfn.local/trainfn-reconciler:$version"], "layers": ["$layers/trainfn-reconciler"], "user": "65532:65532", "entrypoint": ["/trainfn-reconciler"]},
 {"refs": ["trainfn.local/pause:1"], "layers": ["$layers/pause"], "user": "65535:65535", "entrypoint": ["/pause"]}
]
JSON
(cd hack/tools/nodeimage && go build -o "$bin/nodeimage" .)
"$bin/nodeimage" -spec "$node/images.json" -o "$node/images.tar" -cache "$node/layers.packed"
rm -rf "$node/layers.packed"
cat >"$node/images" <<LIST
openmpi docker.io/mpioperator/mpi-pi:openmpi
mpich docker.io/mpioperator/mpi-pi:mpich
torch trainfn.local/torch:$suite
kubectl-delivery trainfn.local/kubectl-delivery:$kube
trainfn trainfn.local/trainfn:$version
trainfn-reconciler trainfn.local/trainfn-reconciler:$version
pause trainfn.local/pause:1
LIST
echo "$inputs" >"$node/images.version"
