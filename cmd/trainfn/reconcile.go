package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// reconcileMovedCommand is where `trainfn reconcile` was. The reconciler is
// a binary and image of its own, trainfn-reconciler: trainfn is started
// once per build, and linking the reconciler's libraries into it cost every
// render their start-up. A deployment still running the old command line
// fails with what to run instead, whatever flags it gives.
func reconcileMovedCommand(stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:                "reconcile",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(stderr, "trainfn: the reconciler is its own binary and image now: run trainfn-reconciler (image ghcr.io/trainfn/trainfn-reconciler) with the same flags, without \"reconcile\"")
			return exitError(2)
		},
	}
}
