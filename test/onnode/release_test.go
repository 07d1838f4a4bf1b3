//go:build e2e

package onnode

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/test/node"
)

// TestTheReconcilerRunsTheReleasedImage: the reconciler on the node runs
// the image make release wrote into dist/, not one built for the tests: its
// pods' image is the release's tag, and what containerd runs for it is the
// image of this platform in the multi-arch index the release recorded.
func TestTheReconcilerRunsTheReleasedImage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ref := kube.Images["trainfn-reconciler"]
	_, tag, ok := strings.Cut(ref, ":")
	require.True(t, ok, "the node's reconciler image %q has a tag", ref)
	release := filepath.Join(repoRoot(), ".cache", "node", "release", "trainfn-reconciler_"+tag+"_oci")
	recorded, err := os.ReadFile(release + ".digest")
	require.NoError(t, err, "the release's digest of %s", ref)
	named, index, ok := strings.Cut(strings.TrimSpace(string(recorded)), "@")
	require.True(t, ok, "the release's digest file names REF@DIGEST: %q", recorded)
	require.Equal(t, ref, named, "the release's digest is of the image the node runs")
	config := configOf(t, release+".tar", index, runtime.GOARCH)

	pods, err := kube.Client.CoreV1().Pods(node.ReconcilerNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + node.ReconcilerRelease})
	require.NoError(t, err)
	running := 0
	for _, pod := range pods.Items {
		for _, c := range pod.Status.ContainerStatuses {
			if c.State.Running == nil {
				continue
			}
			running++
			assert.Equal(t, ref, c.Image, "pod %s's image", pod.Name)
			// An imported image has no registry's digest: containerd
			// names it by its config's.
			assert.Equal(t, config, c.ImageID, "pod %s's image, as containerd resolved it", pod.Name)
		}
	}
	require.Positive(t, running, "no reconciler container runs in %s", node.ReconcilerNamespace)
}

// configOf reads an OCI image layout's archive: its index.json must name
// the index digest, whose linux image for arch it follows to that image's
// config digest.
func configOf(t *testing.T, archive, index, arch string) string {
	t.Helper()
	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	// The layout's JSON files: small, unlike its layers.
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if h.Typeflag == tar.TypeReg && h.Size < 1<<20 {
			files[strings.TrimPrefix(h.Name, "./")], err = io.ReadAll(tr)
			require.NoError(t, err)
		}
	}
	type descriptor struct {
		Digest   string `json:"digest"`
		Platform *struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		} `json:"platform"`
	}
	var doc struct {
		Manifests []descriptor `json:"manifests"`
		Config    descriptor   `json:"config"`
	}
	read := func(name string) {
		t.Helper()
		data, ok := files[name]
		require.True(t, ok, "%s holds %s", archive, name)
		doc.Manifests, doc.Config = nil, descriptor{}
		require.NoError(t, json.Unmarshal(data, &doc), name)
	}
	blob := func(digest string) string { return "blobs/" + strings.Replace(digest, ":", "/", 1) }

	read("index.json")
	require.Len(t, doc.Manifests, 1, "index.json names one index")
	require.Equal(t, index, doc.Manifests[0].Digest, "index.json names the recorded index")
	read(blob(index))
	var image string
	for _, m := range doc.Manifests {
		if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == arch {
			image = m.Digest
		}
	}
	require.NotEmpty(t, image, "the index holds an image for linux/%s", arch)
	read(blob(image))
	require.NotEmpty(t, doc.Config.Digest, "the image %s names its config", image)
	return doc.Config.Digest
}
