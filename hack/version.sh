#!/usr/bin/env bash
# version.sh: this checkout's version, as trainfn stamps it and as a release
# needs it (vMAJOR.MINOR.PATCH[-PRERELEASE]): the tag itself on a tagged
# commit; after a tag, git describe's "vX.Y.Z-N-gHASH"; before any tag,
# v0.0.0-dev- and the commit's short hash (a prerelease, which a hash of
# digits alone with a leading 0 would not be); "-dirty" when files are
# changed. make release VERSION="$(hack/version.sh)" releases a checkout
# as it is, as .ci/run does.
set -euo pipefail
cd "$(dirname "$0")/.."
described=$(git describe --tags --match 'v[0-9]*' --always --dirty 2>/dev/null || echo dev)
if [[ $described =~ ^v[0-9]+\.[0-9]+\.[0-9]+ ]]; then
	echo "$described"
else
	echo "v0.0.0-dev-$described"
fi
