package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// The suites install Kueue's CRDs and webhooks from KueueModule and run
// the controller hack/tools/kueue builds: the two must be one release.
func TestKueueModuleIsTheBuiltOne(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "hack", "tools", "kueue", "go.mod"))
	require.NoError(t, err)
	built := regexp.MustCompile(`(?m)^\s*(?:require\s+)?sigs\.k8s\.io/kueue\s+(v\S+)`).FindSubmatch(data)
	require.NotNil(t, built, "hack/tools/kueue/go.mod requires no sigs.k8s.io/kueue")
	require.Equal(t, "sigs.k8s.io/kueue@"+string(built[1]), KueueModule)
}
