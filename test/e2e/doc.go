// Package e2e is the end-to-end suite: every output trainfn renders is
// applied to a real control plane (see test/cluster), must be accepted, and
// must run as promised. It needs the build tag e2e; `make e2e` builds the
// control plane's components and runs it.
package e2e
