// Command trainfn-reconciler runs trainfn's in-cluster reconciler: the
// run-time facts of the jobs trainfn rendered (elastic discovery and
// scaling, clean-up, SSH Secrets, and for DIJobs their phase, the allocator
// and the DI server API). It is a binary and image of its own, apart from
// trainfn, because trainfn is a KRM function that orchestrators start once
// per build: the reconciler's libraries would slow down every render's
// start-up.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time (-ldflags "-X main.version=..."); otherwise
// the module version the binary was built from is reported.
var version = ""

// exitError carries an exit code past cobra; what it says is already
// written. Commands return it for every failure of their own, so any other
// error is cobra's: a wrong command line, exit status 2.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	root := rootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	var code exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	default:
		fmt.Fprintln(stderr, "trainfn-reconciler:", err)
		return 2
	}
}

func versionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print trainfn-reconciler's version",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintln(stdout, "trainfn-reconciler", buildVersion())
		},
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
