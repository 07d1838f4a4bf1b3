package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No container engine runs on the machines that test trainfn, so the images
// themselves are never built here. These tests hold the Dockerfile to what
// the images promise: each build command makes a static binary, and
// trainfn's does a KRM function's work as an unprivileged user with nothing
// around it, as in the container.

// dockerfileBuild is the Dockerfile's `go build` line of a binary, /out/NAME,
// run as it is in what the image's build gets of the repository: the
// files .dockerignore lets through.
func dockerfileBuild(t *testing.T, name, out string) *exec.Cmd {
	t.Helper()
	root := filepath.Join("..", "..")
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	require.NoError(t, err)
	target := "/out/" + name
	m := regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .*-o ` + regexp.QuoteMeta(target) + ` .*)$`).FindSubmatch(dockerfile)
	require.NotNil(t, m, "the Dockerfile builds %s with CGO_ENABLED=0 go build", target)
	script := strings.NewReplacer("${VERSION}", "v0.0.0-test", target, out).Replace(string(m[1]))
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = buildContext(t, root)
	return cmd
}

// buildContext copies root without what .dockerignore leaves out. Its
// patterns are matched as docker matches them here: against a path from
// the root, or any of the directories leading to it.
func buildContext(t *testing.T, root string) string {
	t.Helper()
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	require.NoError(t, err)
	var patterns []string
	for _, line := range strings.Split(string(ignore), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, strings.TrimSuffix(line, "/"))
		}
	}
	ignored := func(rel string) bool {
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, rel); ok {
				return true
			}
		}
		return false
	}
	context := t.TempDir()
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if ignored(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(context, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(context, rel), data, 0o644)
	})
	require.NoError(t, err)
	return context
}

func TestImageBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds trainfn")
	}
	// A directory of its own, which user nobody may enter (t.TempDir's
	// parent is its owner's alone).
	dir, err := os.MkdirTemp("", "trainfn-image-") //nolint:usetesting // t.TempDir's parent would shut user nobody out
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, os.RemoveAll(dir)) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "trainfn")
	out, err := dockerfileBuild(t, "trainfn", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assertStatic(t, bin)
	version, err := exec.Command(bin, "version").Output()
	require.NoError(t, err)
	assert.Equal(t, "trainfn v0.0.0-test\n", string(version), "the build argument VERSION reaches the binary")

	t.Run("as nobody, with nothing around it", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("switching to user nobody needs root")
		}
		// The image's only file is the binary, and kustomize runs it as
		// nobody with no network: an empty environment and a directory the
		// user cannot write stand in for that.
		input, err := os.ReadFile(testdata(t, "mpi-operator-pi"))
		require.NoError(t, err)
		list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " +
			strings.ReplaceAll(strings.TrimSpace(string(input)), "\n", "\n  ") + "\n"

		cmd := exec.Command(bin)
		cmd.Dir = "/"
		cmd.Env = []string{}
		cmd.Stdin = strings.NewReader(list)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), stderr.String())

		r := trainfn(list)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, r.stdout, stdout.String(), "the same ResourceList out as the binary under test gives")
		assert.Contains(t, stdout.String(), "kind: Job")
	})
}

// The reconciler's image is built as trainfn's, from its own line: a static
// binary that takes its version from the build argument.
func TestReconcilerImageBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds trainfn-reconciler")
	}
	bin := filepath.Join(t.TempDir(), "trainfn-reconciler")
	out, err := dockerfileBuild(t, "trainfn-reconciler", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assertStatic(t, bin)
	version, err := exec.Command(bin, "version").Output()
	require.NoError(t, err)
	assert.Equal(t, "trainfn-reconciler v0.0.0-test\n", string(version), "the build argument VERSION reaches the binary")
}

// assertStatic checks that the binary runs on a base image with no dynamic
// loader and no shared library.
func assertStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "a static binary asks for no dynamic loader: the base image has none")
		assert.NotEqual(t, elf.PT_DYNAMIC, p.Type, "a static binary links no shared library")
	}
}
