package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/trainfn/trainfn/cmd/internal/cli"
)

type result struct {
	code           int
	stdout, stderr string
}

func runReconciler(args ...string) result {
	var out, errOut bytes.Buffer
	code := cli.Execute(rootCommand(&out, &errOut), args, &errOut)
	return result{code, out.String(), errOut.String()}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := runReconciler(args...)
		assert.Equal(t, 0, r.code, args)
		assert.True(t, strings.HasPrefix(r.stdout, "trainfn-reconciler "), "%v: %q", args, r.stdout)
		assert.Equal(t, 1, strings.Count(r.stdout, "\n"), "%v: %q", args, r.stdout)
	}
}

// The chart's flags are checked against --help (charts/charts_test.go);
// here, that it lists them and runs nothing.
func TestHelp(t *testing.T) {
	r := runReconciler("--leader-elect=false", "--help")
	assert.Equal(t, 0, r.code, r.stderr)
	for _, flag := range []string{"--kubeconfig", "--namespaces", "--leader-elect", "--metrics-bind-address", "--health-probe-bind-address", "--di-server-bind-address", "--di-server-write-rate", "--di-server-write-burst", "--di-server-token-review", "--progress-address", "--progress-tls-secret", "--progress-tls-secret-namespace", "--progress-dns-names", "--coalesce", "--scheduling-period", "--log-level"} {
		assert.Contains(t, r.stdout, flag)
	}
}

func TestCommandLineErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"reconcile"}, `unknown command "reconcile"`},
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"--coalesce", "soon"}, "--coalesce"},
		{[]string{"--log-level", "warn"}, `--log-level must be info or debug, not "warn"`},
		{[]string{"--di-server-write-rate", "0"}, "--di-server-write-rate must be above 0 and --di-server-write-burst at least 1, not 0 and 50"},
		{[]string{"--di-server-write-rate", "NaN"}, "--di-server-write-rate must be above 0"},
		{[]string{"--di-server-write-burst", "0"}, "not 10 and 0"},
		{[]string{"--di-server-write-burst", "many"}, "--di-server-write-burst"},
	} {
		r := runReconciler(c.args...)
		assert.Equal(t, 2, r.code, c.args)
		assert.Empty(t, r.stdout, c.args)
		assert.True(t, strings.HasPrefix(r.stderr, "trainfn-reconciler: "), "%v: %q", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.says, c.args)
	}
}

func TestNoAPIServer(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	r := runReconciler("--kubeconfig", missing)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "trainfn-reconciler: reading kubeconfig "+missing+": stat "+missing+": no such file or directory\n", r.stderr)
}
