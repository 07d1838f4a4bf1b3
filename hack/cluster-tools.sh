#!/usr/bin/env bash
# Builds the control plane the end-to-end suite runs and what the node runs
# beside it into .cache/bin, once (hack/build-tools.sh's cluster set). The
# suite takes kwok's stages from the kwok module the main go.mod requires,
# the version the tools module builds.
set -euo pipefail
exec "$(dirname "$0")/build-tools.sh" cluster
