package testtool

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// Render runs the trainfn binary's render command over files (job
// specs, function configs) and returns its output.
func Render(t testing.TB, trainfn string, files ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(trainfn, append([]string{"render"}, files...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "trainfn render %v: %s", files, stderr.String())
	return out
}

// Apply applies a YAML stream into a namespace with kubectl, as a user
// would: the rendered output names no namespace, so every object lands
// there.
func Apply(t testing.TB, kubectl, kubeconfig, ns string, stream []byte) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", ns, "apply", "-f", "-")
	cmd.Stdin, cmd.Stderr = bytes.NewReader(stream), &stderr
	require.NoError(t, cmd.Run(), "kubectl apply: %s", stderr.String())
}
