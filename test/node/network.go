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

// cniConfig is the pods' network: a veth each on the node's bridge, an
// address from the node's subnet (host-local's record of them kept in the
// state folder), the node as their gateway. No masquerade: there is nothing
// beyond the node to reach.
func cniConfig() string {
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
      "ranges": [[{"subnet": %q, "rangeStart": "10.200.0.10", "gateway": %q}]],
      "routes": [{"dst": "0.0.0.0/0"}],
      "dataDir": %q
    }
  }]
}
`, Bridge, Subnet, IP, filepath.Join(StateDir, "ipam"))
}

// addBridge makes the node's bridge with the node's address before anything
// starts: the API server listens there, and the bridge plugin takes the
// bridge it finds.
func addBridge() error {
	for _, args := range [][]string{
		{"link", "add", Bridge, "type", "bridge"},
		{"addr", "add", IP + "/16", "dev", Bridge},
		{"link", "set", Bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// cleanUp removes what a node leaves in the machine: its pods' network
// namespaces (which takes their veths with them), kube-proxy's rules, the
// bridge, the state folder; and the files of dir unless it is empty. It is
// idempotent: where nothing is left, it does nothing.
func cleanUp(dir string) error {
	var errs []error
	unmountUnder(StateDir)
	errs = append(errs, os.RemoveAll(StateDir))
	if b, err := binaries(); err == nil {
		// Its own clean-up knows its chains; it fails where there are none.
		_ = exec.Command(b.kubeProxy, "--cleanup").Run()
	}
	if dir != "" {
		unmountUnder(dir)
		errs = append(errs, os.RemoveAll(dir))
	}
	if exec.Command("ip", "link", "show", Bridge).Run() == nil {
		if out, err := exec.Command("ip", "link", "delete", Bridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link delete %s: %w: %s", Bridge, err, out))
		}
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

func (n *Node) startProxy(b bins) error {
	config, err := file(n.Dir, "kube-proxy.yaml", fmt.Sprintf(proxyConfig, n.KubeconfigOf(proxyUser), Name, Subnet, IP, !bridgedThroughIptables()))
	if err != nil {
		return err
	}
	return n.Run("kube-proxy", b.kubeProxy, "--config", config)
}
