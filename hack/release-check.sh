#!/usr/bin/env bash
# release-check.sh [VERSION]: makes the release twice, into two folders, and
# fails unless both runs wrote the same bytes (checksums.txt) and the
# release holds what it says: every file checksums.txt lists, this
# machine's trainfn printing the version, and each image an OCI layout
# whose index names both platforms. The second run reuses the first's
# builds, in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-v0.0.0-check}
first=$(mktemp -d) second=$(mktemp -d)
trap 'rm -rf "$first" "$second"' EXIT

DIST=$first hack/release.sh "$version"
DIST=$second hack/release.sh "$version"
if ! cmp -s "$first/checksums.txt" "$second/checksums.txt"; then
	echo "release-check: two runs wrote different bytes:" >&2
	diff "$first/checksums.txt" "$second/checksums.txt" >&2 || true
	exit 1
fi
(cd "$first" && sha256sum --check --strict --quiet checksums.txt)

os=$(go env GOOS) arch=$(go env GOARCH)
folder=trainfn_${version}_${os}_${arch}
tar -C "$first" -xzf "$first/$folder.tar.gz"
said=$("$first/$folder/trainfn" version)
if [[ $said != "trainfn $version" ]]; then
	echo "release-check: $folder/trainfn version says \"$said\", not \"trainfn $version\"" >&2
	exit 1
fi
for name in trainfn trainfn-reconciler; do
	layout=$first/${name}_oci
	mkdir "$layout"
	tar -C "$layout" -xf "$first/${name}_${version}_oci.tar"
	platforms=$(.cache/bin/release-pack inspect -tag "$version" "$layout")
	if [[ $platforms != "linux/amd64 linux/arm64" ]]; then
		echo "release-check: the $name image's index holds \"$platforms\", not linux/amd64 and linux/arm64" >&2
		exit 1
	fi
done
echo "release-check: $version twice, the same $(wc -l <"$first/checksums.txt") files" >&2
