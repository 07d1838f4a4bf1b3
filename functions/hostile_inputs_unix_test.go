//go:build unix

package functions

// Hostile inputs to render: what a directory holds besides YAML files
// (symbolic links that lead out of it, named pipes, sockets, devices),
// and inputs that never end. A refused input is named with why, and its
// content is never read.

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// jobsDir is a directory holding a job spec, in a folder of its own so
// that files can be put beside it, outside it.
func jobsDir(t *testing.T) (outside, dir string) {
	t.Helper()
	// Resolved, as messages name link targets, where the temporary
	// folder is itself under a link (macOS's /var).
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir = filepath.Join(outside, "jobs")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pi.yaml"), []byte(hostileJob), 0o644))
	return outside, dir
}

// secretYAML is what a symbolic link must not carry into the output.
const secretYAML = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: admin\nstringData:\n  token: s3cr3t\n"

// refusedInputs reads paths as render does, requires the read to fail
// with diagnostics, and returns them as text.
func refusedInputs(t *testing.T, paths ...string) string {
	t.Helper()
	docs, err := ReadDocuments(paths, nil)
	require.Nil(t, docs)
	var diags Diagnostics
	require.True(t, errors.As(err, &diags), "the read fails with diagnostics: %v", err)
	return diags.Error()
}

func TestHostileSymbolicLinkOutOfTheDirectory(t *testing.T) {
	outside, dir := jobsDir(t)
	secret := filepath.Join(outside, "admin.yaml")
	require.NoError(t, os.WriteFile(secret, []byte(secretYAML), 0o600))
	for _, c := range []struct{ name, target string }{
		{"absolute", secret},
		{"relative", "../admin.yaml"},
		{"through a link inside", "inside.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inside, link := filepath.Join(dir, "inside.yaml"), filepath.Join(dir, "secret.yaml")
			require.NoError(t, os.Symlink("../admin.yaml", inside))
			require.NoError(t, os.Symlink(c.target, link))
			t.Cleanup(func() { assert.NoError(t, errors.Join(os.Remove(inside), os.Remove(link))) })

			report := refusedInputs(t, dir)
			assert.Contains(t, report, link+": error: a symbolic link to "+secret+", outside "+dir+": render reads a directory's files only from inside it, as kustomize reads only files inside its root")
			assert.NotContains(t, report, "s3cr3t")
			_, diags, err := ExpandFiles([]string{dir}, nil, Flags{})
			require.NoError(t, err)
			assert.True(t, diags.HasErrors())
		})
	}
	t.Run("the same file named as an argument", func(t *testing.T) {
		docs, err := ReadDocuments([]string{dir, secret}, nil)
		require.NoError(t, err, "a user may name any file they can read")
		assert.Len(t, docs, 2)
	})
}

func TestHostileSymbolicLinkToADevice(t *testing.T) {
	_, dir := jobsDir(t)
	link := filepath.Join(dir, "zero.yaml")
	require.NoError(t, os.Symlink("/dev/zero", link))
	assert.Contains(t, refusedInputs(t, dir), link+": error: a symbolic link to /dev/zero, outside "+dir)
}

func TestHostileSymbolicLinkInsideTheDirectoryIsRead(t *testing.T) {
	_, dir := jobsDir(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "shared"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shared", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"), 0o644))
	require.NoError(t, os.Symlink("shared/cm.yaml", filepath.Join(dir, "a-link.yaml")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "pi.yaml"), filepath.Join(dir, "b-absolute.yml")))

	docs, err := ReadDocuments([]string{dir}, nil)
	require.NoError(t, err)
	var read []string
	for _, d := range docs {
		read = append(read, filepath.Base(d.Source.Path)+" "+d.Node.GetName())
	}
	assert.Equal(t, []string{"a-link.yaml cm", "b-absolute.yml pi", "pi.yaml pi", "cm.yaml cm"}, read,
		"a link to a file inside is read, named by where it was found, in lexical order")
}

func TestHostileDirectoryGivenThroughASymbolicLink(t *testing.T) {
	outside, dir := jobsDir(t)
	link := filepath.Join(outside, "current")
	require.NoError(t, os.Symlink("jobs", link))
	require.NoError(t, os.Symlink("pi.yaml", filepath.Join(dir, "again.yaml")))
	docs, err := ReadDocuments([]string{link}, nil)
	require.NoError(t, err)
	require.Len(t, docs, 2)
	assert.Equal(t, filepath.Join(link, "again.yaml"), docs[0].Source.Path)
	assert.Equal(t, filepath.Join(link, "pi.yaml"), docs[1].Source.Path)
}

func TestHostileFilesThatAreNotRegular(t *testing.T) {
	outside, dir := jobsDir(t)
	fifo := filepath.Join(dir, "pipe.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	// A socket's path is short on some systems: one beside the test's
	// folder keeps it so.
	socketPath := filepath.Join(dir, "s.yaml")
	listener, err := net.Listen("unix", socketPath)
	require.NoError(t, err)
	defer listener.Close()
	require.NoError(t, syscall.Mkfifo(filepath.Join(outside, "out-pipe"), 0o644))
	require.NoError(t, os.Symlink("pipe.yaml", filepath.Join(dir, "to-pipe.yaml")))
	require.NoError(t, os.Symlink("../out-pipe", filepath.Join(dir, "to-out-pipe.yaml")))
	require.NoError(t, os.Symlink("nowhere.yaml", filepath.Join(dir, "dangling.yaml")))
	require.NoError(t, os.Symlink("loop.yaml", filepath.Join(dir, "loop.yaml")))
	require.NoError(t, os.Mkdir(filepath.Join(outside, "elsewhere"), 0o755))
	require.NoError(t, os.Symlink("../elsewhere", filepath.Join(dir, "folder.yaml")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.Symlink("..", filepath.Join(dir, "sub", "up.yaml")))
	// Files of other names are not read, whatever they are.
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "notes"), 0o644))

	report := refusedInputs(t, dir)
	assert.Equal(t, strings.Join([]string{
		filepath.Join(dir, "dangling.yaml") + ": error: a symbolic link that leads nowhere: no such file or directory",
		filepath.Join(dir, "folder.yaml") + ": error: a symbolic link to " + filepath.Join(outside, "elsewhere") + ", outside " + dir + ": render reads a directory's files only from inside it, as kustomize reads only files inside its root; copy the file into the directory, or give it as an argument of its own",
		filepath.Join(dir, "loop.yaml") + ": error: a symbolic link that leads nowhere: EvalSymlinks: too many links",
		fifo + ": error: a named pipe (FIFO): render reads only regular files from a directory it is given (a pipe or a device may be given as an argument of its own)",
		socketPath + ": error: a socket: render reads only regular files from a directory it is given (a pipe or a device may be given as an argument of its own)",
		filepath.Join(dir, "sub", "up.yaml") + ": error: a symbolic link to " + dir + ", a directory: render reads only regular files from a directory it is given",
		filepath.Join(dir, "to-out-pipe.yaml") + ": error: a symbolic link to " + filepath.Join(outside, "out-pipe") + ", outside " + dir + ": render reads a directory's files only from inside it, as kustomize reads only files inside its root; copy the file into the directory, or give it as an argument of its own",
		filepath.Join(dir, "to-pipe.yaml") + ": error: a symbolic link to " + fifo + ", a named pipe (FIFO): render reads only regular files from a directory it is given",
	}, "\n"), report)
}

func TestHostileInputThatNeverEnds(t *testing.T) {
	t.Run("a device of NUL bytes", func(t *testing.T) {
		for _, read := range []func() (Diagnostics, error){
			func() (Diagnostics, error) { _, d, err := Read([]string{"/dev/zero"}, nil); return d, err },
			func() (Diagnostics, error) {
				zero, err := os.Open("/dev/zero")
				require.NoError(t, err)
				defer zero.Close()
				_, d, err := Read([]string{Stdin}, zero)
				return d, err
			},
		} {
			diags, err := read()
			require.NoError(t, err)
			require.Len(t, diags, 1)
			assert.Contains(t, diags[0].String(), ":1:1: error: not a YAML file: the control character U+0000 may not appear in YAML", "refused on its first bytes")
		}
	})
	t.Run("text without end", func(t *testing.T) {
		_, diags, err := Read([]string{Stdin}, endlessText{})
		require.NoError(t, err)
		require.Len(t, diags, 1)
		assert.Equal(t, "<stdin>: error: more than 134217728 bytes (128 MiB), the most trainfn reads from one input: split the documents into several files; is it a device or a process that never stops writing?", diags[0].String())

		err = RunFunction(&kio.ByteReadWriter{Reader: endlessText{}, Writer: io.Discard})
		assert.EqualError(t, err, "<stdin>: error: more than 134217728 bytes (128 MiB), the most trainfn reads from one input: split the documents into several files; is it a device or a process that never stops writing?")
	})
	t.Run("a file larger than the bound is not read", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "large.yaml")
		f, err := os.Create(path)
		require.NoError(t, err)
		// Sparse: no block of it is written.
		require.NoError(t, f.Truncate(MaxInputBytes+1))
		require.NoError(t, f.Close())
		_, diags, err := Read([]string{path}, nil)
		require.NoError(t, err)
		require.Len(t, diags, 1)
		assert.Equal(t, path+": error: 134217729 bytes, more than 134217728 bytes (128 MiB), the most trainfn reads from one input: split the documents into several files; is it a device or a process that never stops writing?", diags[0].String())
	})
	t.Run("a pipe, as <(kustomize build) gives one", func(t *testing.T) {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		go func() {
			_, err := io.WriteString(w, hostileJob)
			assert.NoError(t, errors.Join(err, w.Close()))
		}()
		defer r.Close()
		docs, err := ReadDocuments([]string{"/dev/fd/" + strconv.Itoa(int(r.Fd()))}, nil)
		require.NoError(t, err)
		require.Len(t, docs, 1)
		assert.Equal(t, "pi", docs[0].Node.GetName())
	})
}

// endlessText is a YAML comment that never ends.
type endlessText struct{}

func (endlessText) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "# text\n"[i%7]
	}
	return len(p), nil
}
