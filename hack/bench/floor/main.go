// Command floor is the benchmark's floor: a KRM function on the same kyaml
// reader and writer as trainfn that passes its ResourceList through and does
// nothing else. Given a ResourceList as large as trainfn's output, it costs
// what any kyaml function producing that output pays for YAML alone.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

func main() {
	passThrough := framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil })
	if err := framework.Execute(passThrough, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
