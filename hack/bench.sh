#!/usr/bin/env bash
# The render half of make bench (see hack/bench/README.md): whole trainfn
# processes against the floor, then the Go benchmarks of schema
# compilation, validation and rendering, each set against the previous run.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/tools.sh bench
mkdir -p .cache/bench
go build -o .cache/bench/floor ./hack/bench/floor
go run ./hack/bench/render -bin bin/trainfn -floor .cache/bench/floor -runs "${RUNS:-10}" "$@"

echo
go run ./hack/bench/launch ${BENCH_LAUNCH_FLAGS:-}

echo
go test -run '^$' -bench . -benchmem -count "${COUNT:-6}" ./schemas ./functions >.cache/bench/go-new.txt
if [[ -f .cache/bench/go.txt ]]; then
	.cache/bin/benchstat previous=.cache/bench/go.txt now=.cache/bench/go-new.txt
else
	.cache/bin/benchstat .cache/bench/go-new.txt
fi
mv .cache/bench/go-new.txt .cache/bench/go.txt
echo "Go benchmark results written to .cache/bench/go.txt"

echo
echo "A Service per worker of a PyTorchJob of 1,000 workers (replicaServices: true), against the job's own (false), in this run:"
.cache/bin/benchstat -filter '.name:ReplicaServices' -col /services .cache/bench/go.txt

echo
echo "A TrainJob of 64 MPI nodes (Trainer's deepspeed-distributed runtime, resolved in the same run), against an MPIJob of 64 workers, in this run:"
.cache/bin/benchstat -filter '.name:TrainJobAgainstMPIJob' -col /kind .cache/bench/go.txt
