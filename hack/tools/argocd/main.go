// Command argocd-harness runs the two halves of Argo CD's manifest
// generation, its sync and its health assessment from Argo CD's own
// packages, so that trainfn's Argo CD examples are tested against the code a
// real installation runs, not a description of it:
//
//	argocd-harness cmp-server [flags]
//	    the config management plugin sidecar's argocd-cmp-server, unchanged
//	    (its flags and environment are Argo CD's)
//	argocd-harness generate --repo DIR --application FILE --argocd-cm FILE
//	    what the application controller asks of the repo-server and what the
//	    repo-server does with it: the Application's source, argocd-cm's
//	    settings, then the repo-server's GenerateManifests (kustomize build
//	    with kustomize.buildOptions, or the plugin sidecar over its socket)
//	argocd-harness sync --kubeconfig FILE --namespace NS [--server-side-apply] MANIFEST...
//	    what the application controller does to sync an Application:
//	    gitops-engine's cluster cache and sync, with the controller's options
//	argocd-harness health --argocd-cm FILE < OBJECTS
//	    what the application controller shows as health: each live object's
//	    (gitops-engine's checks and argocd-cm's Lua ones), one line each,
//	    GROUP/KIND<TAB>NAMESPACE/NAME<TAB>STATUS<TAB>MESSAGE, then
//	    Application<TAB>STATUS, the worst of them (health.go says more)
//
// The released argocd is one multi-call binary, every component chosen by
// its argv[0]; these pieces are all the tests need, so only they are
// built.
package main

import (
	"fmt"
	"os"

	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: argocd-harness cmp-server|generate|sync|health [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "cmp-server":
		cmd := cmpserver.NewCommand()
		cmd.SetArgs(os.Args[2:])
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
	case "generate":
		os.Exit(generate(os.Args[2:]))
	case "sync":
		os.Exit(syncManifests(os.Args[2:]))
	case "health":
		os.Exit(healthOf(os.Args[2:], os.Stdin, os.Stdout))
	default:
		fmt.Fprintf(os.Stderr, "argocd-harness: unknown command %q (want cmp-server, generate, sync or health)\n", os.Args[1])
		os.Exit(2)
	}
}
