package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBinaryPrefersKubebuilderAssets(t *testing.T) {
	assets := t.TempDir()
	fake := filepath.Join(assets, "kube-apiserver")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv(AssetsEnv, assets)

	got, err := Binary("kube-apiserver")
	require.NoError(t, err)
	require.Equal(t, fake, got)
}

func TestBinaryMissingSaysHowToBuildIt(t *testing.T) {
	t.Setenv(AssetsEnv, t.TempDir())

	_, err := Binary("no-such-component")
	require.ErrorContains(t, err, "no-such-component is not built: run hack/cluster-tools.sh")
}
