// Command node starts the cluster of package test/node and leaves it
// running, a playground without Docker (make node), stops it (make
// node-down), or loses and returns one of its nodes (make node-stop, make
// node-start):
//
//	go run ./hack/node up [NODES]         # writes .cache/node/kubeconfig
//	go run ./hack/node stop NAME [--keep] # as its machine died; --keep leaves its Node object
//	go run ./hack/node start NAME
//	go run ./hack/node down
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/trainfn/trainfn/test/node"
)

var errUsage = errors.New("usage: node up [NODES] | down | stop NAME [--keep] | start NAME")

func main() {
	cache, err := filepath.Abs(filepath.Join(".cache", "node"))
	if err == nil {
		err = run(cache, os.Args[1:])
	}
	if errors.Is(err, errUsage) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		os.Exit(1)
	}
}

func run(cache string, args []string) error {
	dir := filepath.Join(cache, "run")
	kubeconfig := filepath.Join(cache, "kubeconfig")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	switch {
	case len(args) == 1 && args[0] == "down":
		_ = os.Remove(kubeconfig)
		return node.Down(dir)
	case len(args) >= 1 && len(args) <= 2 && args[0] == "up":
		nodes := 1
		if len(args) == 2 {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return fmt.Errorf("NODES is a number, not %q", args[1])
			}
			nodes = n
		}
		return up(ctx, dir, cache, kubeconfig, nodes)
	case len(args) == 2 && args[0] == "start":
		n, err := node.Attach(ctx, dir, cache)
		if err != nil {
			return fmt.Errorf("no cluster is running (make node): %w", err)
		}
		return n.ReturnMember(ctx, args[1])
	case (len(args) == 2 || len(args) == 3 && args[2] == "--keep") && args[0] == "stop":
		n, err := node.Attach(ctx, dir, cache)
		if err != nil {
			return fmt.Errorf("no cluster is running (make node): %w", err)
		}
		if err := n.LoseMember(args[1]); err != nil {
			return err
		}
		if len(args) == 3 {
			return nil
		}
		fmt.Fprintf(os.Stderr, "node: waiting for %s to be taken for lost, then deleting its Node\n", args[1])
		return n.DeleteNode(ctx, args[1])
	}
	return errUsage
}

func up(ctx context.Context, dir, cache, kubeconfig string, nodes int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n, err := node.Start(ctx, node.Options{Dir: dir, Cache: cache, Detach: true, Kueue: true, Nodes: nodes})
	if err != nil {
		return err
	}
	data, err := os.ReadFile(n.Kubeconfig)
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		return err
	}
	for _, m := range n.Members {
		fmt.Printf("node %s is up at %s, its pods in %s\n", m.Name, m.IP, m.Subnet)
	}
	fmt.Printf("export KUBECONFIG=%s; the images are listed in %s\n", kubeconfig, filepath.Join(cache, "images"))
	return nil
}
