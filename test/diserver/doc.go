// Package diserver runs the DI server API (reconciler/diserver), served by
// the http.Server the reconciler serves, against a real control plane with
// kwok's fake kubelets (see test/cluster): the test creates the objects a
// DIJob renders into, with the annotations the reconciler would have
// added, and checks that the API lists, adds and removes workers and
// stores profilings on them, and that every refused request leaves them as
// they were. The fake pods take loopback addresses, and the test sends each
// request from the address of the pod it calls as, so that the server
// knows its caller as it would in a cluster. It also checks who may call,
// how long a stalled connection is kept, and what the requests cost the API
// server. It needs the build tag e2e.
package diserver
