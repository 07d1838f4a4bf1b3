// Package testtool is what the test suites share: finding the external
// programs they run for real (kustomize, ssh, sshd, ...), as hack/tools.sh
// installs them, and waiting for what converges.
package testtool

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// RequireEnv, when set (the Makefile sets it), turns a missing tool into a
// test failure; a bare `go test` skips the test instead.
const RequireEnv = "TRAINFN_REQUIRE_TOOLS"

// Find returns the path of a tool: the one built under the repository's
// .cache/bin, else the one on PATH, else a few system directories (sshd
// lives in /usr/sbin, which is not on every user's PATH).
func Find(t testing.TB, name string) string {
	t.Helper()
	if p, ok := Built(name); ok {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(dir, name); Executable(p) {
			return p
		}
	}
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s is not installed: run make tools", name)
	}
	t.Skipf("%s is not installed: run make tools (make test does)", name)
	return ""
}

// Built returns the path of a tool the project's scripts built into the
// repository's .cache/bin, if they did.
func Built(name string) (string, bool) {
	p := filepath.Join(repoRoot(), ".cache", "bin", name)
	return p, Executable(p)
}

// Unpacked returns the folder the project's scripts unpacked a tool's
// packages into, under the repository's .cache: a test without it fails
// under RequireEnv and is skipped otherwise.
func Unpacked(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(repoRoot(), ".cache", name)
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		return dir
	}
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s is not unpacked into .cache: run hack/tools.sh e2e", name)
	}
	t.Skipf("%s is not unpacked into .cache: run hack/tools.sh e2e", name)
	return ""
}

// Executable reports whether p is a file that may be run.
func Executable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

// repoRoot is the repository this file is in.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CorpusEnv names the compatibility corpus: real manifests users write
// today, kept beside the repository as ../shared/compat/upstream.
const CorpusEnv = "TRAINFN_UPSTREAM_CORPUS"

// UpstreamCorpus is the compatibility corpus's folder; a test without it
// is skipped.
func UpstreamCorpus(t testing.TB) string {
	t.Helper()
	corpus := os.Getenv(CorpusEnv)
	if corpus == "" {
		corpus = filepath.Join(repoRoot(), "..", "shared", "compat", "upstream")
	}
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("no compatibility corpus at %s (set %s)", corpus, CorpusEnv)
	}
	return corpus
}

// RunWithTrainfn runs a suite's tests, for a TestMain, with the trainfn
// binary built into a temporary folder whose path it stores in *trainfn:
// suites that run trainfn as users do build it once.
func RunWithTrainfn(m *testing.M, trainfn *string) int {
	return RunWithCommands(m, map[string]*string{"trainfn": trainfn})
}

// RunWithCommands is RunWithTrainfn for several of the module's commands,
// named by their folders under cmd/ (trainfn, trainfn-reconciler), built
// together; each one's path is stored where commands says.
func RunWithCommands(m *testing.M, commands map[string]*string) int {
	dir, err := os.MkdirTemp("", "trainfn-")
	if err != nil {
		panic(err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			panic(err)
		}
	}()
	// A folder given to -o, with its slash, takes every package's binary
	// under its own name.
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for name, path := range commands {
		*path = filepath.Join(dir, name)
		args = append(args, "github.com/trainfn/trainfn/cmd/"+name)
	}
	build := exec.Command("go", args...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		panic(err)
	}
	return m.Run()
}

// Buffer collects the output of processes that write to it concurrently.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
