# trainfn's images: each one static binary on distroless's static base, run
# as an unprivileged user. Small (the binary and a few KiB of base), no
# shell, no package manager.
#
# The default (last) stage is trainfn's function image. kustomize and kpt
# run container functions as user "nobody", which the base's /etc/passwd
# resolves; the default user is distroless's nonroot (65532). The stage
# "reconciler" is trainfn-reconciler's image, which the chart
# charts/trainfn-reconciler runs; a binary of its own, so that the
# function, started once per build, does not link the reconciler's
# libraries.
#
# Build (this needs a container engine; trainfn's own CI has none):
#   docker build --build-arg VERSION=v0.1.0 -t ghcr.io/trainfn/trainfn:v0.1.0 .
#   docker build --build-arg VERSION=v0.1.0 --target reconciler -t ghcr.io/trainfn/trainfn-reconciler:v0.1.0 .
# For several platforms, the compiler cross-compiles rather than running
# under emulation:
#   docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=v0.1.0 -t ghcr.io/trainfn/trainfn:v0.1.0 .
FROM --platform=$BUILDPLATFORM golang:1.26 AS source
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS TARGETARCH
ENV GOOS=$TARGETOS GOARCH=$TARGETARCH

# A build stage per binary: an image's build compiles only its own.
FROM source AS build-reconciler
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/trainfn-reconciler ./cmd/trainfn-reconciler

FROM gcr.io/distroless/static-debian12:nonroot AS reconciler
COPY --from=build-reconciler /out/trainfn-reconciler /trainfn-reconciler
USER 65532:65532
ENTRYPOINT ["/trainfn-reconciler"]

FROM source AS build
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/trainfn ./cmd/trainfn

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/trainfn /trainfn
USER 65532:65532
ENTRYPOINT ["/trainfn"]
