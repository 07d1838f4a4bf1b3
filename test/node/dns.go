package node

import (
	"context"
	"fmt"
	"net"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// corefile is CoreDNS's configuration: the cluster's names from its
// kubernetes plugin, on the node's address, where the kubelet points every
// pod's resolver. Nothing is forwarded, there is nothing beyond the node:
// every other name does not exist. (Left unanswered, it would be a server
// failure, which ends a resolver's walk down its search list: a name such
// as service.namespace, tried as it is first, would never be tried under
// svc.cluster.local.) A plugin used here must be one the CoreDNS of
// hack/tools/coredns imports: it has no other.
const corefile = `%[2]s:53 in-addr.arpa:53 ip6.arpa:53 {
    bind %[1]s
    errors
    kubernetes %[2]s in-addr.arpa ip6.arpa {
        kubeconfig %[3]s trainfn-e2e
        pods insecure
    }
}
.:53 {
    bind %[1]s
    template ANY ANY {
        rcode NXDOMAIN
    }
}
`

// corednsRole is what CoreDNS's kubernetes plugin reads, as CoreDNS's own
// deployment grants it (system:coredns).
var corednsRole = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
}

// startDNS grants CoreDNS its role and starts it, returning once it
// answers for the cluster's own name.
func (n *Node) startDNS(ctx context.Context, b bins) error {
	if err := n.grant(ctx, corednsUser, corednsRole); err != nil {
		return err
	}
	config, err := file(n.Dir, "Corefile", fmt.Sprintf(corefile, IP, Domain, n.KubeconfigOf(corednsUser)))
	if err != nil {
		return err
	}
	if err := n.Run("coredns", b.coredns, "-conf", config); err != nil {
		return err
	}
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort(IP, "53"))
	}}
	return n.Wait(ctx, "CoreDNS", time.Minute, func(ctx context.Context) error {
		_, err := resolver.LookupHost(ctx, "kubernetes.default.svc."+Domain)
		return err
	})
}
