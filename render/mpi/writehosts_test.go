package mpi

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/handoff"
)

// The script runs here under /bin/sh as the launcher's init container runs
// it, with temporary directories for the ConfigMap's mount and the
// launcher's /etc/mpi, and must write what Hostfile and DiscoverHosts
// write for the same hosts.
func TestWriteHostsWritesWhatWouldBeListed(t *testing.T) {
	workers := NumberedHosts{Prefix: "pi-worker-", Suffix: ".pi", Count: 1000, Slots: 4}
	for name, c := range map[string]struct {
		impl     Implementation
		format   handoff.DiscoverFormat
		first    []handoff.Host
		numbered NumberedHosts
	}{
		"OpenMPI":                   {OpenMPI, handoff.HostOnly, nil, workers},
		"Intel, host:slots":         {Intel, handoff.HostSlots, nil, workers},
		"MPICH, launcher works too": {MPICH, handoff.HostOnly, []handoff.Host{{Name: "pi-launcher.pi", Slots: 4}}, workers},
		// Not DNS names, but the script must not read them as shell or printf.
		"quotes and percents": {OpenMPI, handoff.HostSlots, []handoff.Host{{Name: `it's-100%\n`, Slots: 1}},
			NumberedHosts{Prefix: `50%'s\t-`, Suffix: `.$(false)`, Count: 3, Slots: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			from, to := configMapVolume(t, map[string]string{
				WriteHostsKey:     WriteHosts(c.impl, c.format, c.first, c.numbered),
				WaitForWorkersKey: WaitForWorkers(c.impl),
			}), t.TempDir()

			out, err := exec.Command("/bin/sh", filepath.Join(from, WriteHostsKey), from, to).CombinedOutput()
			require.NoError(t, err, "%s", out)

			hosts := slices.Concat(c.first, c.numbered.Hosts())
			assertFile(t, filepath.Join(to, HostfileKey), Hostfile(c.impl, hosts), 0o444)
			assertFile(t, filepath.Join(to, handoff.DiscoverHostsKey), handoff.DiscoverHosts(hosts, c.format), 0o555)
			assertFile(t, filepath.Join(to, WaitForWorkersKey), WaitForWorkers(c.impl), 0o555)
			entries, err := os.ReadDir(to)
			require.NoError(t, err)
			assert.Len(t, entries, 4, "the ConfigMap's two files, the hostfile and the discovery script, and no temporary file")
		})
	}
}

func TestWriteHostsFailsWhenItCannotWrite(t *testing.T) {
	from := configMapVolume(t, map[string]string{WriteHostsKey: WriteHosts(OpenMPI, handoff.HostOnly, nil, NumberedHosts{Prefix: "w-", Count: 3, Slots: 1})})
	to := filepath.Join(t.TempDir(), "missing")
	out, err := exec.Command("/bin/sh", filepath.Join(from, WriteHostsKey), from, to).CombinedOutput()
	assert.Error(t, err, "a launcher without its hostfile must not start: %s", out)
}

// configMapVolume lays files out as the kubelet mounts a ConfigMap: each
// a symbolic link into a hidden directory that holds the data.
func configMapVolume(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	data := filepath.Join(dir, "..data")
	require.NoError(t, os.Mkdir(data, 0o755))
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(data, name), []byte(text), 0o555))
		require.NoError(t, os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)))
	}
	return dir
}

func assertFile(t *testing.T, path, want string, mode os.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(got), path)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, mode, info.Mode().Perm(), path)
}
