// Command trainfn-reconciler runs trainfn's in-cluster reconciler: the
// run-time facts of the jobs trainfn rendered (elastic discovery and
// scaling, clean-up, SSH Secrets, and for DIJobs their phase, the allocator
// and the DI server API). It is a binary and image of its own, apart from
// trainfn, because trainfn is a KRM function that orchestrators start once
// per build: the reconciler's libraries would slow down every render's
// start-up.
package main

import (
	"os"

	"github.com/trainfn/trainfn/cmd/internal/cli"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = ""

func main() {
	os.Exit(cli.Execute(rootCommand(os.Stdout, os.Stderr), os.Args[1:], os.Stderr))
}
