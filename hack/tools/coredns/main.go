// Command coredns is CoreDNS with only the plugins the test node's Corefile
// uses (test/node/dns.go), built the way CoreDNS documents for a binary of
// one's own plugins: a main that imports coremain and the plugins, which
// register themselves. The stock command links every plugin CoreDNS ships,
// with their cloud SDKs and tracers: about 600 packages that nothing here
// runs, compiled on every cold build of the tools.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/template"
)

func main() { coremain.Run() }
