//go:build e2e

package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRestartAPIServerKeepsAddressAndData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Nodes: 1})
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-restart"}, Data: map[string]string{"k": "v"}}
	_, err = c.Client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	server := func() *process { return c.procs[c.proc("kube-apiserver")] }
	before := server().cmd.Process.Pid

	require.NoError(t, c.RestartAPIServer(ctx))
	require.NotEqual(t, before, server().cmd.Process.Pid, "the API server was not restarted")
	// The same client, so the same address and certificate, finds the data.
	got, err := c.Client.CoreV1().ConfigMaps("default").Get(ctx, "before-restart", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, cm.Data, got.Data)
	require.FileExists(t, server().log+".before-restart")
}
