package functions

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestHostileNamedPipeIsNeverOpened watches named pipes in a directory
// with inotify while render reads the directory: a pipe is refused from
// what the directory lists, before anything opens it, the kustomization
// render looks for in each folder included.
func TestHostileNamedPipeIsNeverOpened(t *testing.T) {
	_, dir := jobsDir(t)
	fifo := filepath.Join(dir, "pipe.yaml")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "deploy"), 0o755))
	kustomization := filepath.Join(dir, "deploy", "kustomization.yaml")
	watch, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, unix.Close(watch)) })
	for _, p := range []string{fifo, kustomization} {
		require.NoError(t, syscall.Mkfifo(p, 0o644))
		_, err := unix.InotifyAddWatch(watch, p, unix.IN_OPEN)
		require.NoError(t, err)
	}

	report := refusedInputs(t, dir)
	assert.Contains(t, report, fifo+": error: a named pipe (FIFO)")
	assert.Contains(t, report, kustomization+": error: a named pipe (FIFO)")
	events := make([]byte, 4096)
	n, err := unix.Read(watch, events)
	assert.ErrorIs(t, err, unix.EAGAIN, "no pipe was opened (%d bytes of events)", n)

	// The watch sees an open: the check above can fail.
	f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	n, err = unix.Read(watch, events)
	require.NoError(t, err)
	assert.Positive(t, n)
}
