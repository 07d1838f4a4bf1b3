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
#   - the pod sandbox's pause image.
# trainfn's image and trainfn-reconciler's are the release's, as users get
# them: the OCI layouts make release writes into dist/. The release there
# is used if it was made from this checkout as it is (any version; one
# under way is waited for), else made (hack/release.sh, at
# hack/version.sh's version); the node imports its layouts beside
# images.tar, as .cache/node/archives lists them.
# The archive is rebuilt when this script, its files, the release or the
# tools change; the file system only when its package list does.
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

# The release in dist/, if this checkout as it is made it: its version
# (hack/release.sh --images). A release under way holds its lock, and its
# images will do once written, before its last builds.
dist=$root/dist
exec 8>"$root/.cache/release.lock"
until flock -n 8 || version=$(hack/release.sh --images); do
	sleep 2
done
flock -u 8
if ! version=$(hack/release.sh --images) || [[ ! -f $dist/trainfn_${version}_oci.tar || ! -f $dist/trainfn-reconciler_${version}_oci.tar ]]; then
	version=$(hack/version.sh)
	echo "node-images: making the release $version (make release)" >&2
	hack/release.sh "$version"
fi
released=() digests=()
for name in trainfn trainfn-reconciler; do
	released+=("${name}_${version}_oci.tar")
	digests+=("${name}_${version}_oci.digest")
done

kube=$(cd hack/tools && go list -m -f '{{.Version}}' k8s.io/kubernetes)
inputs=$( (cat "$0" hack/node/image/* "$node/rootfs.version"; git ls-files -s test/node/pause test/torchrun/testdata hack/tools/nodeimage; git diff HEAD -- test/node/pause hack/tools/nodeimage; cd "$dist" && sha256sum "${released[@]}" "${digests[@]}"; sha256sum "$bin/kubectl") | sha256sum | cut -d' ' -f1)
if [[ -f $node/images.tar && "$(cat "$node/images.version" 2>/dev/null)" == "$inputs" ]]; then
	exit 0
fi
# A copy: a later release into dist/ does not change what the node imports.
rm -rf "$node/release" && mkdir -p "$node/release"
# The digests too: the node's tests check that its pods run these images.
for file in "${released[@]}" "${digests[@]}"; do
	cp "$dist/$file" "$node/release/"
done
echo "node-images: packing the images" >&2

layers=$node/layers
rm -rf "$layers"
# A layer's folder replaces a symbolic link of the layers below: no layer
# has /bin, which Debian links to /usr/bin.
mkdir -p "$layers"/{openmpi,mpich,torch,pause} "$layers/delivery/usr/bin"

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

CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$layers/pause/pause" ./test/node/pause

path=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cat >"$node/images.json" <<JSON
[
 {"refs": ["docker.io/mpioperator/mpi-pi:openmpi"], "layers": ["$rootfs", "$layers/openmpi"], "env": ["$path"], "workingDir": "/home/mpiuser", "cmd": ["bash"]},
 {"refs": ["docker.io/mpioperator/mpi-pi:mpich"], "layers": ["$rootfs", "$layers/mpich"], "env": ["$path"], "workingDir": "/home/mpiuser", "cmd": ["bash"]},
 {"refs": ["trainfn.local/torch:$suite"], "layers": ["$rootfs", "$layers/torch"], "env": ["$path"], "workingDir": "/workspace", "cmd": ["bash"]},
 {"refs": ["trainfn.local/kubectl-delivery:$kube"], "layers": ["$rootfs", "$layers/delivery"], "env": ["$path"], "cmd": ["bash"]},
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
trainfn ghcr.io/trainfn/trainfn:$version
trainfn-reconciler ghcr.io/trainfn/trainfn-reconciler:$version
pause trainfn.local/pause:1
LIST
printf '%s\n' images.tar "${released[@]/#/release/}" >"$node/archives"
echo "$inputs" >"$node/images.version"
