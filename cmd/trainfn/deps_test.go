package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// trainfn is started once per build by kustomize, kpt or Argo CD, so
// every package init it links is paid at every render. The reconciler's
// libraries are trainfn-reconciler's alone; `trainfn status` reads the API
// server through client-go's rest package and the three API groups it
// lists, not a scheme of every group.
func TestLinksNoReconcilerLibraries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for pkg := range strings.FieldsSeq(string(out)) {
		for _, heavy := range []string{"sigs.k8s.io/controller-runtime", "github.com/prometheus/", "k8s.io/client-go/kubernetes"} {
			assert.False(t, strings.HasPrefix(pkg, heavy), "trainfn links %s", pkg)
		}
	}
}
