#!/usr/bin/env bash
# Whole-process render timings (see hack/bench): run by make bench.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./hack/bench -bin bin/trainfn -runs "${RUNS:-10}" "$@"
