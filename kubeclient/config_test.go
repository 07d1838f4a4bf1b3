package kubeclient_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/trainfn/trainfn/kubeclient"
)

// kubeconfig writes a kubeconfig whose current context reaches server, in
// namespace when one is given.
func kubeconfig(t *testing.T, server, namespace string) string {
	path := filepath.Join(t.TempDir(), "config")
	ns := ""
	if namespace != "" {
		ns = "\n    namespace: " + namespace
	}
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: `+server+`
users:
- name: u
  user:
    token: secret
contexts:
- name: x
  context:
    cluster: c
    user: u`+ns+`
current-context: x
`), 0o600))
	return path
}

func TestConfig(t *testing.T) {
	flag := kubeconfig(t, "https://flag.example:6443", "research")
	env := kubeconfig(t, "https://env.example:6443", "")

	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, env)
	config, namespace, err := kubeclient.Config(flag)
	require.NoError(t, err)
	assert.Equal(t, "https://flag.example:6443", config.Host, "the flag comes before $KUBECONFIG")
	assert.Equal(t, "research", namespace, "the context's namespace")
	assert.Equal(t, float32(-1), config.QPS, "no client-side throttling")

	config, namespace, err = kubeclient.Config("")
	require.NoError(t, err)
	assert.Equal(t, "https://env.example:6443", config.Host)
	assert.Equal(t, "default", namespace, "a context without a namespace means default")

	_, _, err = kubeclient.Config(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorContains(t, err, "missing")
}

// TestConfigNone: with no kubeconfig anywhere and no pod to run in, the
// error says where it looked.
func TestConfigNone(t *testing.T) {
	if _, err := os.Stat(clientcmd.RecommendedHomeFile); err == nil {
		t.Skipf("%s exists", clientcmd.RecommendedHomeFile)
	}
	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, _, err := kubeclient.Config("")
	assert.ErrorContains(t, err, "no kubeconfig (--kubeconfig, $KUBECONFIG, "+clientcmd.RecommendedHomeFile+"), and not in a pod")
}
