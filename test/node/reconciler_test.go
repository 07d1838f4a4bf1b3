package node

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/test/testtool"
)

// The node's images are tagged with the abbreviated commit, which can be
// all digits; the chart must still be given the tag as a string.
func TestReconcilerChartArgsKeepTheTagAString(t *testing.T) {
	helm := testtool.Find(t, "helm")
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	for image, want := range map[string]string{
		"trainfn.local/trainfn-reconciler:6034236":      `image: "trainfn.local/trainfn-reconciler:6034236"`,
		"trainfn.local/trainfn-reconciler:0123e45":      `image: "trainfn.local/trainfn-reconciler:0123e45"`,
		"registry.local:5000/trainfn-reconciler:v1.2.3": `image: "registry.local:5000/trainfn-reconciler:v1.2.3"`,
		"registry.local:5000/trainfn-reconciler":        `image: "registry.local:5000/trainfn-reconciler:latest"`,
	} {
		t.Run(image, func(t *testing.T) {
			args := append([]string{"template", ReconcilerRelease}, reconcilerChartArgs(repo, image, []string{"allocator.enabled=false"})...)
			out, err := exec.Command(helm, args...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.True(t, strings.Contains(string(out), want), "the Deployment should run %s:\n%s", want, out)
		})
	}
}
