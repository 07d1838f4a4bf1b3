package diserver

import (
	"context"
	"net/netip"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// caller is who sent a request: one of the job's own pods, known by the
// address the request came from, or a user known by a bearer token.
type caller struct {
	pod  *corev1.Pod
	user *authenticationv1.UserInfo
}

// String names the caller for logs: never a credential.
func (c caller) String() string {
	if c.user != nil {
		return "user " + c.user.Username
	}
	return "pod " + c.pod.Namespace + "/" + c.pod.Name
}

// podAt is the pod of the DIJob id names whose address remote (the
// request's "ip:port") is, or nil. DI-engine's workers call the API with
// no credentials, so the address is what tells them from other callers:
// a pod's address is its own while it runs, and the request's source
// address is the pod's when it reaches the server unmasqueraded (see
// docs/dijob-v2alpha1.md). Any generation's pod counts: it is the same
// job, and loadJob then answers a stale generation with 404.
func (s *server) podAt(ctx context.Context, id JobID, remote string) (*corev1.Pod, error) {
	from, err := netip.ParseAddrPort(remote)
	if err != nil {
		// Not a TCP peer: nobody's pod.
		return nil, nil
	}
	workloads, err := diWorkloads(ctx, s.cache, id.Namespace, id.Name)
	if err != nil || len(workloads) == 0 {
		return nil, err
	}
	owners := make(map[types.UID]bool, len(workloads))
	for _, w := range workloads {
		owners[w.GetUID()] = true
	}
	var pods corev1.PodList
	if err := s.cache.List(ctx, &pods, client.InNamespace(id.Namespace), client.MatchingLabels(handoff.JobLabels(id.Name))); err != nil {
		return nil, fromAPIServer(err, "listing the job's pods")
	}
	return podWithAddress(pods.Items, owners, from.Addr()), nil
}

// podWithAddress is the pod that holds addr, among the pods a workload of
// owners controls and whose address stands for them (see speaksFor).
// Labels alone prove nothing: anyone who may create a pod may copy them.
func podWithAddress(pods []corev1.Pod, owners map[types.UID]bool, addr netip.Addr) *corev1.Pod {
	addr = addr.Unmap().WithZone("")
	for i := range pods {
		p := &pods[i]
		owner := metav1.GetControllerOf(p)
		if owner == nil || !owners[owner.UID] || !speaksFor(p) {
			continue
		}
		for _, ip := range podIPs(p) {
			if ip == addr {
				return p
			}
		}
	}
	return nil
}

// speaksFor tells whether a pod's address is its own alone: not once the
// pod has finished (the address may be given to a new pod), nor for a pod
// on the node's network (everything on the node shares that address). A
// pod being deleted keeps its address until its containers stop.
func speaksFor(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && !p.Spec.HostNetwork
}

// podIPs are a pod's addresses, of each family it has.
func podIPs(p *corev1.Pod) []netip.Addr {
	var out []netip.Addr
	add := func(s string) {
		if ip, err := netip.ParseAddr(s); err == nil {
			out = append(out, ip.Unmap().WithZone(""))
		}
	}
	add(p.Status.PodIP)
	for _, ip := range p.Status.PodIPs {
		add(ip.IP)
	}
	return out
}
