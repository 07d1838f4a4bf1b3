// Package diserver runs the DI server API (reconciler/diserver) against a
// real control plane with kwok's fake kubelets (see test/cluster): the test
// creates the objects a DIJob renders into, with the annotations the
// reconciler would have added, and checks that the API lists, adds and
// removes workers and stores profilings on them, and that every refused
// request leaves them as they were. It needs the build tag e2e.
package diserver
