// Command node starts the one-node cluster of package test/node and leaves
// it running, a playground without Docker (make node), or stops it (make
// node-down):
//
//	go run ./hack/node up     # writes .cache/node/kubeconfig
//	go run ./hack/node down
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/trainfn/trainfn/test/node"
)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "up" && os.Args[1] != "down") {
		fmt.Fprintln(os.Stderr, "usage: node up|down")
		os.Exit(2)
	}
	cache, err := filepath.Abs(filepath.Join(".cache", "node"))
	if err == nil {
		err = run(os.Args[1], cache)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		os.Exit(1)
	}
}

func run(verb, cache string) error {
	dir := filepath.Join(cache, "run")
	kubeconfig := filepath.Join(cache, "kubeconfig")
	if verb == "down" {
		_ = os.Remove(kubeconfig)
		return node.Down(dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n, err := node.Start(ctx, node.Options{Dir: dir, Cache: cache, Detach: true, Kueue: true})
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
	fmt.Printf("node %s is up: export KUBECONFIG=%s; its images are listed in %s\n",
		node.Name, kubeconfig, filepath.Join(cache, "images"))
	return nil
}
