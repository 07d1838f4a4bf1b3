package node

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// cniConfig is a member's pods' network: a veth each on the member's
// bridge, an address from its subnet (host-local's record of them kept in
// its state folder), the bridge as their gateway. No masquerade: a pod's
// address is routed as it is to every other member's pods, and there is
// nothing beyond the cluster to reach.
func cniConfig(m Member) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "trainfn",
  "plugins": [{
    "type": "bridge",
    "bridge": %q,
    "isGateway": true,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": %q, "rangeStart": %q, "gateway": %q}]],
      "routes": [{"dst": "0.0.0.0/0"}],
      "dataDir": %q
    }
  }]
}
`, Bridge, m.Subnet, strings.TrimSuffix(m.Gateway, ".1")+".10", m.Gateway, filepath.Join(m.state, "ipam"))
}

// cleanUp removes what a cluster leaves in the machine: every member's
// pods' network namespaces (which takes their veths with them), its state
// folder and its network (the first's queue rule with it), kube-proxy's
// rules on this machine; and the files of dir unless it is empty. It is
// idempotent: where nothing is left, it does nothing.
func cleanUp(dir string) error {
	var errs []error
	members := append([]Member{member(1)}, plugged()...)
	states, _ := filepath.Glob(StateDir + "-*")
	for _, state := range states {
		if m, err := MemberNamed(Name + strings.TrimPrefix(state, StateDir)); err == nil && !slices.ContainsFunc(members, func(o Member) bool { return o.Name == m.Name }) {
			members = append(members, m)
		}
	}
	for _, m := range members {
		unmountUnder(m.state)
		errs = append(errs, os.RemoveAll(m.state))
	}
	if b, _ := binaries(); b.kubeProxy != "" {
		// Its own clean-up knows its chains; it fails where there are none.
		// The other members' rules go with their namespaces.
		_ = exec.Command(b.kubeProxy, "--cleanup").Run()
	}
	if dir != "" {
		unmountUnder(dir)
		errs = append(errs, os.RemoveAll(dir))
	}
	for _, m := range members {
		errs = append(errs, m.unplug())
	}
	return errors.Join(errs...)
}

// unmountUnder unmounts everything mounted under dir, the deepest first:
// the pods' volumes the kubelet mounted, the containers' root file systems,
// the network namespaces.
func unmountUnder(dir string) {
	if dir == "" {
		return
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var points []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			points = append(points, unescapeMount(fields[4]))
		}
	}
	_ = f.Close() // read only
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		_ = syscall.Unmount(p, syscall.MNT_DETACH)
	}
}

// unescapeMount undoes mountinfo's octal escapes of spaces and the like.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// proxyConfig is kube-proxy's configuration: iptables, as most clusters
// run it. A pod's connection to a Service keeps the pod's address as its
// source, as in clusters that follow Kubernetes' network prerequisites:
// the DI server knows a DIJob's pods by it. That needs the bridge to pass
// its traffic through iptables (bridge-nf-call-iptables), so that the
// answer of a pod on the same bridge is translated back; on a machine
// whose bridge does not, every connection to a Service is masqueraded
// instead (masqueradeAll), so that the answer comes back through the node,
// and the DI server refuses the DIJob's calls. conntrack's table is left
// as the machine sizes it: the sandbox may not change it.
const proxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %q
mode: iptables
hostnameOverride: %q
clusterCIDR: %q
bindAddress: %q
healthzBindAddress: ""
metricsBindAddress: 127.0.0.1:10249
iptables:
  masqueradeAll: %t
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`

// bridgedThroughIptables tells whether this network namespace passes
// bridged IPv4 traffic through iptables (br_netfilter), as Kubernetes asks
// of a node's network.
func bridgedThroughIptables() bool {
	value, err := os.ReadFile("/proc/sys/net/bridge/bridge-nf-call-iptables")
	return err == nil && strings.TrimSpace(string(value)) == "1"
}

// proxy is kube-proxy's command on a member, in its network namespace:
// its rules are the member's own.
func (n *Node) proxy(m Member, b bins) (component, error) {
	config, err := file(m.dir(n.Dir), "kube-proxy.yaml", fmt.Sprintf(proxyConfig, n.KubeconfigOf(proxyUser), m.Name, ClusterCIDR, m.IP, !bridgedThroughIptables()))
	if err != nil {
		return component{}, err
	}
	return m.component("kube-proxy", b.kubeProxy, "--config", config), nil
}
