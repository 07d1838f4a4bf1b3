//go:build e2e

package e2e

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/test/testtool"
)

// TestUpstreamCorpus renders every manifest of the compatibility corpus,
// the job specs users write today, and applies what trainfn makes of them:
// each must render without error, and its output must be accepted and run
// as promised. Kinds trainfn does not expand yet pass through and are not
// applied; the test covers each as soon as its renderer exists.
func TestUpstreamCorpus(t *testing.T) {
	corpus := testtool.UpstreamCorpus(t)
	var manifests []string
	err := filepath.WalkDir(corpus, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			manifests = append(manifests, path)
		}
		return err
	})
	require.NoError(t, err)
	require.NotEmpty(t, manifests, "the corpus at %s holds no manifests", corpus)
	for _, path := range manifests {
		name, _ := filepath.Rel(corpus, path)
		t.Run(filepath.ToSlash(name), func(t *testing.T) {
			t.Parallel()
			docs, err := functions.ReadDocuments([]string{path}, nil)
			require.NoError(t, err)
			rendered, diags := functions.Expand(docs)
			require.False(t, diags.HasErrors(), "trainfn render %s:\n%v", name, diags)
			var objs []*unstructured.Unstructured
			for _, n := range rendered {
				data, err := n.MarshalJSON()
				require.NoError(t, err)
				obj := &unstructured.Unstructured{}
				require.NoError(t, obj.UnmarshalJSON(data))
				objs = append(objs, obj)
			}
			if objs = withoutPassThrough(t, objs); len(objs) == 0 {
				t.Skip("nothing native to apply yet")
			}
			checkSchedulers(t, objs)
			ensurePriorityClasses(t, objs)
			ns := kube.Namespace(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			require.NoError(t, serverSideApply(ctx, ns, objs), "the API server refused what %s renders to", name)
			checkWorkloads(t, ns, objs)
		})
	}
}
