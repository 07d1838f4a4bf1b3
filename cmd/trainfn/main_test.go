package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/trainfn/trainfn/test/testtool"
)

type result struct {
	code           int
	stdout, stderr string
}

func trainfn(stdin string, args ...string) result {
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func testdata(t *testing.T, name string) string { return testtool.GoldenInput(t, name) }

func TestRenderPrintsOnlyNativeObjects(t *testing.T) {
	r := trainfn("", "render", testdata(t, "mpi-operator-pi"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "error:")
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(r.stdout)}).Read()
	require.NoError(t, err)
	var kinds []string
	for _, n := range nodes {
		kinds = append(kinds, n.GetApiVersion()+" "+n.GetKind())
	}
	assert.ElementsMatch(t, []string{"v1 ConfigMap", "v1 Service", "batch/v1 Job", "batch/v1 Job"}, kinds)
	assert.NotRegexp(t, `(?m)^kind: MPIJob$`, r.stdout, "the job spec is not passed through")
	assert.NotContains(t, r.stdout, "PRIVATE KEY")
}

func TestRenderReadsStdin(t *testing.T) {
	file := trainfn("", "render", testdata(t, "mpi-operator-pi"))
	for _, args := range [][]string{{"render"}, {"render", "-"}} {
		r := trainfn(readFile(t, testdata(t, "mpi-operator-pi")), args...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, file.stdout, r.stdout, args)
	}
}

func TestBadSpecFailsWithFileFieldAndRule(t *testing.T) {
	for _, cmd := range []string{"render", "validate"} {
		path := testdata(t, "error-unknown-fields")
		r := trainfn("", cmd, path)
		assert.Equal(t, 1, r.code, cmd)
		assert.Empty(t, r.stdout, "%s prints nothing on error", cmd)
		assert.Contains(t, r.stderr, path+`:9:3: error: MPIJob typos: spec.slotPerWorker: Forbidden: unknown field (did you mean "slotsPerWorker"?)`)
	}
}

func TestValidateIsQuietOnSuccess(t *testing.T) {
	r := trainfn("", "validate", testdata(t, "mixed-stream"), testdata(t, "yaml-features"))
	assert.Equal(t, result{code: 0}, r)
}

func TestWarningsDoNotFail(t *testing.T) {
	r := trainfn("", "render", testdata(t, "run-policy"))
	assert.Equal(t, 0, r.code)
	assert.NotEmpty(t, r.stdout)
	assert.Contains(t, r.stderr, "warning: MPIJob bounded: spec.runPolicy.schedulingPolicy")
}

func TestMissingFile(t *testing.T) {
	r := trainfn("", "render", "no-such-file.yaml")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "no-such-file.yaml")
	assert.Empty(t, r.stdout)
}

func TestUsageErrors(t *testing.T) {
	r := trainfn("", "render", "--no-such-flag")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "unknown flag")
}

func TestVersion(t *testing.T) {
	r := trainfn("", "version")
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "trainfn "), r.stdout)
}

// A deployment that still runs `trainfn reconcile` fails, whatever its
// flags, and says what runs the reconciler now.
func TestReconcileMoved(t *testing.T) {
	for _, args := range [][]string{{"reconcile"}, {"reconcile", "--kubeconfig", "/etc/kubeconfig", "--leader-elect=false", "--no-such-flag"}, {"reconcile", "--help"}} {
		r := trainfn("", args...)
		assert.Equal(t, 2, r.code, args)
		assert.Empty(t, r.stdout, args)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		assert.Contains(t, r.stderr, "trainfn-reconciler", args)
		assert.Contains(t, r.stderr, "same flags", args)
	}
	assert.NotContains(t, trainfn("", "--help").stdout, "reconcile", "the command is hidden")
}

func TestFunctionMode(t *testing.T) {
	spec := readFile(t, testdata(t, "mpi-operator-pi"))
	rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " +
		strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ") + "\n"
	r := trainfn(rl)
	require.Equal(t, 0, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stdout, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"), r.stdout)
	assert.Contains(t, r.stdout, "name: pi-launcher")

	bad := trainfn(strings.Replace(rl, "slotsPerWorker", "slotPerWorker", 1))
	assert.Equal(t, 1, bad.code)
	assert.Contains(t, bad.stdout, "results:", "the ResourceList carries the results")
	assert.Contains(t, bad.stderr, "MPIJob pi: spec.slotPerWorker: Forbidden: unknown field")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestDiff(t *testing.T) {
	dir := t.TempDir()
	old := testdata(t, "mpi-operator-pi")
	spec := readFile(t, old)
	write := func(name, content string) string {
		path := dir + "/" + name
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	relabelled := write("relabelled.yaml", strings.Replace(spec, "  name: pi\n", "  name: pi\n  labels: {team: a}\n", 1))
	rescaled := write("rescaled.yaml", strings.Replace(spec, "replicas: 2", "replicas: 3", 1))
	require.NotEqual(t, spec, readFile(t, rescaled))

	r := trainfn("", "diff", "--exit-code", old, relabelled)
	assert.Equal(t, result{0, "MPIJob pi: updated in place (metadata.labels)\n", ""}, r, "nothing restarts: --exit-code passes")
	r = trainfn("", "diff", old, rescaled)
	assert.Equal(t, 0, r.code, "without --exit-code a restart is only said")
	assert.Contains(t, r.stdout, "MPIJob pi: restarts (spec.mpiReplicaSpecs.Worker.replicas")
	r = trainfn(spec, "diff", "--exit-code", "-", rescaled)
	assert.Equal(t, 1, r.code, "a restart fails --exit-code")
	assert.Contains(t, r.stdout, "MPIJob pi: restarts")

	r = trainfn("", "diff", "--exit-code", old, testdata(t, "error-unknown-fields"))
	assert.Equal(t, 2, r.code, "trouble is 2, as diff(1)'s, not a restart's 1")
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "spec.slotPerWorker")
	r = trainfn("", "diff", "-", "-")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "only one of OLD and NEW can be -")
	assert.Equal(t, 2, trainfn("", "diff", old).code, "OLD and NEW")
}
