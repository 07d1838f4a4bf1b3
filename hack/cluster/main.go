// Command cluster starts the end-to-end suite's control plane and keeps it
// up until interrupted, for poking at rendered output by hand:
//
//	make cluster-tools && go run ./hack/cluster
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/trainfn/trainfn/test/cluster"
)

func main() {
	nodes := flag.Int("nodes", 3, "fake nodes kwok manages")
	flag.Parse()
	if err := run(*nodes); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

// run starts the control plane and stops it once interrupted.
func run(nodes int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cluster.Start(ctx, cluster.Options{Nodes: nodes})
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Printf("export KUBECONFIG=%s\n# components' logs are in %s; interrupt to stop\n", c.Kubeconfig, c.Dir)
	<-ctx.Done()
	return nil
}
