# trainfn: the two commands a newcomer needs are in README.md.

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# RELEASE_VERSION is the VERSION given, or else this checkout's as a
# release needs it (hack/version.sh: v0.0.0-dev-HASH before any tag); read
# only by the targets that use it.
RELEASE_VERSION = $(if $(filter command line environment,$(origin VERSION)),$(VERSION),$(shell hack/version.sh))

.PHONY: build test e2e e2e-tools tools cluster-tools node-tools node node-down node-stop node-start bench-node lint golden generate bench fuzz release release-check clean

## build: bin/trainfn, the binary the examples' exec paths point at, and
## bin/trainfn-reconciler, the in-cluster reconciler
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/trainfn ./cmd/trainfn-reconciler

# PHASE runs a step as one phase of a target: it says how long the step
# took, and .ci/run prints every phase's time (hack/phase.sh).
PHASE := hack/phase.sh

## test: lint, then every test, with the real tools they need installed
## first, then the Pod Security sweep over every golden case, a module of
## its own (test/podsecurity); each a phase
test:
	$(PHASE) tools hack/tools.sh
	$(PHASE) lint env GO=$(GO) hack/lint.sh $(LINT_FLAGS)
	$(PHASE) "unit tests" env TRAINFN_REQUIRE_TOOLS=1 $(GO) test -timeout 20m ./...
	$(PHASE) "pod security" env -C test/podsecurity $(GO) test -timeout 5m .

## e2e: apply every rendered output to a real control plane, built once, and
## run every example with its real tool (kustomize, kubectl, kpt, helm 3 and 4,
## Argo CD's plugin server, Flux's build) against its reviewed output; then
## run the jobs as real containers on a real node (test/onnode), trainfn's
## images the release's in dist/ (made first if this checkout did not make
## it); the tools, the images and each package a phase
e2e:
	$(PHASE) "e2e tools" hack/tools.sh e2e
	$(PHASE) "node tools" hack/tools.sh node
	GO=$(GO) hack/e2e.sh

## tools: install what the tests run for real (kustomize, kpt, helm,
## golangci-lint, ssh, sshd, ip, unshare); idempotent
tools:
	hack/tools.sh

## e2e-tools: the tools, and what the end-to-end suite runs besides (torchrun,
## Open MPI, MPICH, the control plane, Argo CD's plugin server and manifest
## generation)
e2e-tools:
	hack/tools.sh e2e

## cluster-tools: build etcd, the Kubernetes components, kwok and CoreDNS
## into .cache/bin
cluster-tools:
	hack/cluster-tools.sh

## node-tools: what a real node needs (containerd, runc, the CNI plugins,
## debootstrap) and its images, built here without a registry or Docker,
## trainfn's the release's (.cache/node/images lists them); idempotent, the
## images cached
node-tools:
	hack/tools.sh node
	hack/node-images.sh

## node: start a cluster of NODES real nodes (kubelets with containerd; 1 by
## default) and leave it running: KUBECONFIG=.cache/node/kubeconfig;
## node-down stops it; node-stop NODE=name kills a node as its machine dying
## would and deletes its Node once NotReady (KEEP_NODE=1 keeps it), node-start
## NODE=name brings it back
NODES ?= 1
node: node-tools
	$(GO) run ./hack/node up $(NODES)

node-down:
	$(GO) run ./hack/node down

node-stop:
	$(GO) run ./hack/node stop $(NODE) $(if $(KEEP_NODE),--keep)

node-start:
	$(GO) run ./hack/node start $(NODE)

## lint: gofmt, then golangci-lint (.golangci.yml: go vet's analyzers and
## more) over everything, the e2e-tagged suites too; builds the pinned
## golangci-lint into .cache/bin first if it is missing or its pin changed
## (LINT_FLAGS=--fix applies the fixes that it can)
lint:
	GO=$(GO) hack/lint.sh $(LINT_FLAGS)

# GOLDEN_PACKAGES are the kinds' packages with golden cases, found where
# every kind keeps them: render/<kind>/testdata/<version>/<case>/input.yaml.
GOLDEN_PACKAGES := $(sort $(foreach f,$(wildcard render/*/testdata/*/*/input.yaml),./$(firstword $(subst /testdata/, ,$(f)))))

## golden: rewrite the expected outputs from the current code; review the diff
golden: tools
	$(GO) test -count=1 $(GOLDEN_PACKAGES) ./functions ./examples -update \
		-run 'TestGolden|TestKustomize|TestKptRender$$|TestHelmPostRenderer$$|TestHelmPlugin$$|TestFlux'
	hack/argocd-tools.sh
	$(GO) test -count=1 -tags e2e ./examples -update -run 'TestArgoCDPlugin$$|TestArgoCDKustomizeBuildOptions$$'

## generate: regenerate the Kubernetes schemas from the pinned release, and
## what is exported from the CUE schemas (the KRMFunctionDefinition, the
## trainfn-job chart's values.schema.json)
generate:
	$(GO) generate ./schemas ./functions ./charts

## bench-node: the pi example on real nodes, through trainfn and through
## mpi-operator v0.8 in the same run (hack/bench/node; BENCH_NODE_FLAGS='-runs 3',
## '-nodes 2 -loss-runs 3' to span two nodes and lose one under a job)
bench-node: build node-tools
	hack/bench-node.sh $(BENCH_NODE_FLAGS)

## bench: whole trainfn processes against the floor (a pass-through KRM function
## on the same kyaml), the Go benchmarks of schemas and rendering and the
## launcher's wait for its workers, then the reconciler's discovery latency,
## API requests and memory on a real control plane (hack/bench/README.md;
## BENCH_RENDER_FLAGS='-cases 1,000', BENCH_LAUNCH_FLAGS=-quick or
## BENCH_RECONCILE_FLAGS=-quick for a short run)
bench: build cluster-tools
	hack/bench.sh $(BENCH_RENDER_FLAGS)
	$(GO) run ./hack/bench/reconcile $(BENCH_RECONCILE_FLAGS)

## fuzz: every fuzz target in turn, FUZZTIME each (1m by default), with
## FUZZPARALLEL workers (the number of cores), only the targets matching the
## regular expression FUZZ if set; fails if any finds a crasher,
## which Go writes to the package's testdata/fuzz/ for go test to replay
fuzz:
	GO=$(GO) hack/fuzz.sh

## release: write a release into dist/ (make release VERSION=vX.Y.Z): the
## binaries for linux and darwin as archives, their SBOMs, the images as OCI
## layouts, the charts, checksums.txt; the same bytes from the same commit
## (hack/release.sh; the first run cross-builds for minutes; one from the
## same sources into dist/ is kept); without VERSION, at this checkout's
## version (hack/version.sh), as .ci/run does.
release:
	GO=$(GO) hack/release.sh $(RELEASE_VERSION)

## release-check: make the release twice and fail unless both wrote the same
## bytes, its trainfn prints its version and its images hold both platforms
release-check:
	GO=$(GO) hack/release-check.sh $(RELEASE_VERSION)

clean:
	rm -rf bin dist
