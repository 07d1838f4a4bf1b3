#!/usr/bin/env bash
# fetch.sh: fetches from the network what a run of every test needs, before
# the builds that need it: the modules of every go.mod in the repository,
# the Debian packages of every mode of hack/tools.sh and the node's root
# file system (debootstrap). .ci/run runs it in the background while make
# test compiles, which leaves the network idle. A build that needs
# something not fetched yet fetches it itself; nothing is fetched twice.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=()
for mod in $(git ls-files go.mod '*/go.mod'); do
	(cd "$(dirname "$mod")" && go mod download) &
	modules+=($!)
done
hack/phase.sh "Debian packages" hack/tools.sh packages
hack/phase.sh "root file system" hack/node-images.sh rootfs
for pid in "${modules[@]}"; do
	wait "$pid"
done
