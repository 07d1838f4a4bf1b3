#!/usr/bin/env bash
# release.sh VERSION: writes a release of trainfn into dist/, the same bytes
# from the same commit whenever and wherever it runs (make release):
#   - trainfn for linux and darwin, trainfn-reconciler for linux, on amd64
#     and arm64: static binaries, as NAME_VERSION_OS_ARCH.tar.gz;
#   - a CycloneDX SBOM of each binary (NAME_VERSION_OS_ARCH.cdx.json), from
#     the modules its build info records (cyclonedx-gomod);
#   - the images of both, NAME_VERSION_oci.tar: an OCI image layout holding
#     one multi-arch index (linux/amd64, linux/arm64), the binary alone run as
#     non-root, tagged VERSION, with OCI labels; NAME_VERSION_oci.digest
#     names its digest;
#   - both charts, packaged at VERSION (its v dropped), their appVersion
#     VERSION, the reconciler's image tag defaulting to it;
#   - checksums.txt, the sha256 of every file.
# Every time is SOURCE_DATE_EPOCH's (by default the commit's), builds are
# -trimpath with the version stamped and no build ID, and archives sort
# their entries and own them by root. The binaries are cross-built: the
# first run builds every platform's packages (minutes each), later runs
# reuse Go's build cache.
#
# A release already written into the same folder, at the same version and
# from the same sources (the commit, every change to it, Go's version), is
# kept: .cache/release.built says what the last run wrote, and
# .cache/release.images what it has written its images for so far (they
# come before darwin's binaries). One run at a time writes, under
# .cache/release.lock: another waits for it.
#
#   release.sh --images    prints the version of the release in dist/ whose
#                          images are written from these sources, or fails
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
go=${GO:-go}

# sources: a hash of what a release is built from: the commit, the changes
# to it, the files git does not track yet, Go's version.
sources() {
	{
		git rev-parse HEAD
		git diff HEAD --binary
		git ls-files --others --exclude-standard -z | xargs -0 -r sha256sum
		"$go" env GOVERSION
	} | sha256sum | cut -d' ' -f1
}
# Each stamp is one line: "DIST VERSION EPOCH SOURCES".
stamps=$root/.cache/release
if [[ ${1:-} == --images ]]; then
	[[ -f $stamps.images ]] || exit 1
	read -r built_dist built_version _ built_sources <"$stamps.images"
	[[ $built_dist == "$(realpath -m "$root/dist")" && $built_sources == "$(sources)" ]] || exit 1
	echo "$built_version"
	exit 0
fi

version=${1:-}
if [[ ! $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
	echo "release: give the version as make release VERSION=vX.Y.Z, not \"$version\"" >&2
	exit 2
fi
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
revision=$(git rev-parse HEAD)
source=https://github.com/trainfn/trainfn
registry=ghcr.io/trainfn
dist=$(realpath -m "${DIST:-$root/dist}")
bin=$root/.cache/bin

mkdir -p "$root/.cache"
exec 9>"$root/.cache/release.lock"
flock 9
built=$stamps.built images=$stamps.images
want="$dist $version $epoch $(sources)"
if [[ "$(cat "$built" 2>/dev/null)" == "$want" ]] &&
	(cd "$dist" && sha256sum --check --strict --quiet checksums.txt) 2>/dev/null; then
	echo "release: $version in $dist is built from these sources already" >&2
	exit 0
fi
rm -f "$built" "$images"

# The tools: Helm 4 (hack/build-tools.sh, which skips it once built), the
# packer (hack/tools/release) and cyclonedx-gomod, pinned by that module,
# built with -trimpath: the SBOM records its tool's hashes. Nothing needs
# root or a Debian package, so a CI runner makes a release as it is.
mkdir -p "$bin"
hack/build-tools.sh test
(cd hack/tools/release && GOFLAGS=-mod=readonly "$go" build -trimpath -o "$bin/release-pack" . &&
	GOFLAGS=-mod=readonly "$go" build -trimpath -o "$bin/cyclonedx-gomod" github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
rm -rf "$dist"
mkdir -p "$dist"

# uuid_of FILE: a UUID (version 5's layout) from the file's sha256, the
# SBOM's serial number: the same binary, the same serial.
uuid_of() {
	local h
	h=$(sha256sum "$1" | cut -c1-32)
	echo "${h:0:8}-${h:8:4}-5${h:13:3}-8${h:17:3}-${h:20:12}"
}

# build NAME OS ARCH: one binary, its archive and its SBOM.
build() {
	local name=$1 os=$2 arch=$3
	local folder=${name}_${version}_${os}_${arch}
	mkdir -p "$stage/$folder"
	echo "release: $name for $os/$arch" >&2
	# Every setting that changes the bytes is set here, not read from the
	# machine's go env.
	env CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOAMD64=v1 GOARM64=v8.0 GOFLAGS=-mod=readonly GOEXPERIMENT= \
		"$go" build -trimpath -buildvcs=false -ldflags "-s -w -buildid= -X main.version=$version" \
		-o "$stage/$folder/$name" "./cmd/$name"
	"$bin/release-pack" archive -epoch "$epoch" -o "$dist/$folder.tar.gz" "$stage/$folder"
	# cyclonedx-gomod names the platform in its package URLs after its own
	# GOOS and GOARCH, not the binary's.
	env GOOS="$os" GOARCH="$arch" "$bin/cyclonedx-gomod" bin -json -std -disable-html-escape -notimestamp \
		-serial "$(uuid_of "$stage/$folder/$name")" -version "$version" \
		-output "$dist/$folder.cdx.json" "$stage/$folder/$name" 2>"$stage/sbom.log" ||
		{ cat "$stage/sbom.log" >&2; exit 1; }
}

# The images' binaries and the images first: the node's images take them
# as soon as .cache/release.images says they are written (hack/node-images.sh),
# while darwin's builds go on.
for arch in amd64 arm64; do
	build trainfn linux "$arch"
	build trainfn-reconciler linux "$arch"
done
for name in trainfn trainfn-reconciler; do
	echo "release: the image $registry/$name:$version" >&2
	"$bin/release-pack" image -epoch "$epoch" -version "$version" -name "$name" -repository "$registry/$name" \
		-source "$source" -revision "$revision" -o "$dist/${name}_${version}_oci.tar" -digest "$dist/${name}_${version}_oci.digest" \
		"linux/amd64=$stage/${name}_${version}_linux_amd64/$name" "linux/arm64=$stage/${name}_${version}_linux_arm64/$name"
done
echo "$want" >"$images"
for arch in amd64 arm64; do
	build trainfn darwin "$arch"
done

# Helm 4 packages a chart's files with their own times (Helm 3 with the
# time it runs): a copy of the charts, every time the epoch's.
cp -r charts "$stage/charts"
find "$stage/charts" -exec touch -h -d "@$epoch" {} +
echo "release: the charts at ${version#v}" >&2
"$bin/helm4" package "$stage/charts/trainfn-job" "$stage/charts/trainfn-reconciler" \
	--version "${version#v}" --app-version "$version" -d "$dist" >/dev/null

mapfile -t files < <(find "$dist" -maxdepth 1 -type f -printf '%f\n' | LC_ALL=C sort)
(cd "$dist" && sha256sum "${files[@]}") >"$dist/checksums.txt"
echo "$want" >"$built"
echo "release: $version in $dist" >&2
