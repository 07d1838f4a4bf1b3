//go:build e2e

package e2e

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAPIServerIsOneTheOutputRunsOn: the suite applies every rendered
// output to the API server it pins; the README's minimum Kubernetes
// version must not exceed it, or the acceptance tests prove nothing of
// the versions the README promises.
func TestAPIServerIsOneTheOutputRunsOn(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`\*\*trainfn's output needs Kubernetes 1\.(\d+) or later\*\*`).FindSubmatch(readme)
	require.NotNil(t, m, "README.md states no minimum Kubernetes version")
	minimum, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)

	version, err := kube.Client.Discovery().ServerVersion()
	require.NoError(t, err)
	minor, err := strconv.Atoi(strings.TrimSuffix(version.Minor, "+"))
	require.NoError(t, err)
	require.Equal(t, "1", version.Major)
	require.GreaterOrEqual(t, minor, minimum, "the suite's API server, %s, is older than the minimum README.md states", version.GitVersion)
	t.Logf("API server %s; README.md's minimum 1.%d", version.GitVersion, minimum)
}
