//go:build e2e

package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestStartServesAndStopLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Nodes: 2})
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	dir, procs := c.Dir, c.procs

	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, nodes.Items, 2)
	// RBAC is on: the scheduler may read pods but not secrets.
	config, err := clientcmd.BuildConfigFromFlags("", filepath.Join(c.Dir, "system-kube-scheduler.kubeconfig"))
	require.NoError(t, err)
	scheduler, err := kubernetes.NewForConfig(config)
	require.NoError(t, err)
	_, err = scheduler.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	_, err = scheduler.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsForbidden(err), "listing secrets as the scheduler: %v", err)

	c.Stop()
	for _, p := range procs {
		require.ErrorIs(t, syscall.Kill(p.cmd.Process.Pid, 0), syscall.ESRCH, "%s still runs", p.name)
	}
	require.NoDirExists(t, dir)
}

func TestStartFailureStopsWhatStarted(t *testing.T) {
	// An API server that cannot start: etcd, already running, must go too.
	assets := t.TempDir()
	broken := filepath.Join(assets, "kube-apiserver")
	require.NoError(t, os.WriteFile(broken, []byte("#!/bin/sh\necho 'cannot start: broken on purpose' >&2\nexit 1\n"), 0o755))
	t.Setenv(AssetsEnv, assets)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	c, err := Start(ctx, Options{Dir: dir})
	require.Nil(t, c)
	require.ErrorContains(t, err, "kube-apiserver exited")
	require.ErrorContains(t, err, "cannot start: broken on purpose")
	require.FileExists(t, filepath.Join(dir, "etcd.log"), "etcd was started")
	require.Empty(t, processesUsing(t, dir))
}

// processesUsing lists the processes whose command line names dir.
func processesUsing(t *testing.T, dir string) []string {
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	var found []string
	for _, path := range cmdlines {
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), dir) {
			found = append(found, strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	return found
}
