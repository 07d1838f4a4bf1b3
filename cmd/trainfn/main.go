// Command trainfn expands training job specs (MPIJob, ...) into plain
// Kubernetes objects. With a ResourceList on stdin it is a KRM function for
// kustomize, kpt and other orchestrators; `trainfn render` does the same on
// plain YAML files.
package main

import "os"

func main() {
	deferCollection()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
