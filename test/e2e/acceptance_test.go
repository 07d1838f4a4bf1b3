//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainfn/trainfn/test/cluster"
	"github.com/trainfn/trainfn/test/testtool"
)

// renderedOutputs are the outputs trainfn's own tests pin: every golden
// case's expected output and every example's, by a name for the test.
func renderedOutputs(t *testing.T) map[string]string {
	outputs := map[string]string{}
	for _, path := range testtool.GoldenOutputs(t) {
		outputs["testdata/"+testtool.GoldenName(filepath.Dir(path))] = path
	}
	examples, err := filepath.Glob("../../examples/*/*/.expected/output.yaml")
	require.NoError(t, err)
	for _, path := range examples {
		example, _ := filepath.Rel("../..", filepath.Dir(filepath.Dir(path)))
		outputs[filepath.ToSlash(example)] = path
	}
	require.Greater(t, len(outputs), len(examples), "no golden output found")
	require.NotEmpty(t, examples, "no example output found")
	return outputs
}

// TestAcceptance applies every rendered output for real, server-side as a
// GitOps controller does and with kubectl apply -n, and checks that what the
// output promises runs: each route into its own namespace, so the output is
// shown not to depend on one.
func TestAcceptance(t *testing.T) {
	for name, path := range renderedOutputs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			all, err := cluster.ReadObjects(path)
			require.NoError(t, err)
			objs := withoutPassThrough(t, all)
			if len(objs) == 0 {
				t.Skip("nothing native to apply")
			}
			checkSchedulers(t, objs)
			ensurePriorityClasses(t, objs)
			t.Run("server-side apply", func(t *testing.T) {
				t.Parallel()
				ns := kube.Namespace(t)
				provideClaims(t, ns, objs)
				provideServiceAccounts(t, ns, objs)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				require.NoError(t, serverSideApply(ctx, ns, objs), "the API server refused %s", path)
				checkWorkloads(t, ns, objs)
			})
			t.Run("kubectl apply -n", func(t *testing.T) {
				t.Parallel()
				for _, obj := range objs {
					if obj.GetNamespace() != "" {
						t.Skipf("%s %s names namespace %s, as its input did, and kubectl apply -n refuses to move it; server-side apply places it in a namespace of its own",
							obj.GetKind(), obj.GetName(), obj.GetNamespace())
					}
				}
				ns := kube.Namespace(t)
				provideClaims(t, ns, objs)
				provideServiceAccounts(t, ns, objs)
				file := path
				if len(objs) != len(all) {
					file = writeObjects(t, objs)
				}
				require.NoError(t, kubectlApply(t, ns, file), "the API server refused %s", path)
				checkWorkloads(t, ns, objs)
			})
		})
	}
}

// TestAcceptanceCanFail breaks a rendered output the way a renderer bug
// would, a container without its required image, and expects both routes
// to be refused: the suite above would fail on such output.
func TestAcceptanceCanFail(t *testing.T) {
	objs, err := cluster.ReadObjects(filepath.Join(testtool.GoldenDir(t, "mpi-operator-pi"), "expected.yaml"))
	require.NoError(t, err)
	broken := 0
	for _, obj := range objs {
		if obj.GetKind() != "Job" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		require.NotEmpty(t, containers)
		delete(containers[0].(map[string]any), "image")
		require.NoError(t, unstructured.SetNestedSlice(obj.Object, containers, "spec", "template", "spec", "containers"))
		broken++
	}
	require.Equal(t, 2, broken, "the pi case renders a launcher and a worker Job")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = serverSideApply(ctx, kube.Namespace(t), objs)
	require.ErrorContains(t, err, "spec.template.spec.containers[0].image: Required value")

	err = kubectlApply(t, kube.Namespace(t), writeObjects(t, objs))
	require.ErrorContains(t, err, "spec.template.spec.containers[0].image: Required value")
}
