package handoff

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiscoverHosts(t *testing.T) {
	hosts := []Host{{Name: "j-worker-0.j", Slots: 4}, {Name: "j-worker-1.j", Slots: 0}}
	script := DiscoverHosts(hosts, HostSlots)
	assert.Equal(t, "#!/bin/sh\necho j-worker-0.j:4\necho j-worker-1.j:0\n", script)
	assert.Equal(t, hosts, ParseDiscoverHosts(script), "the parser reads back what the writer wrote")
	assert.Empty(t, ParseDiscoverHosts(DiscoverHosts(nil, HostSlots)))
	assert.Equal(t, []Host{{Name: "a.j", Slots: 2}, {Name: "c.j", Slots: -1}}, ParseDiscoverHosts("#!/bin/sh\n# echo b.j:1\necho a.j:2\necho c.j\necho d.j e\n"),
		"lines that are not a host's are not read as one")
}

func TestDiscoverHostsWithoutSlots(t *testing.T) {
	hosts := []Host{{Name: "j-worker-0.j", Slots: 4}, {Name: "j-worker-1.j", Slots: 4}}
	script := DiscoverHosts(hosts, HostOnly)
	assert.Equal(t, "#!/bin/sh\necho j-worker-0.j\necho j-worker-1.j\n", script, "mpi-operator v2's format")
	assert.Equal(t, []Host{{Name: "j-worker-0.j", Slots: -1}, {Name: "j-worker-1.j", Slots: -1}}, ParseDiscoverHosts(script))
	assert.Equal(t, DiscoverHosts(hosts, HostSlots), DiscoverHosts(hosts, ""), "host:slots unless asked")
}

// horovodHosts reads a discovery script's output by the rules of Horovod's
// own reader, HostDiscoveryScript.find_available_hosts_and_slots in
// horovod/runner/elastic/discovery.py (horovod/horovod at
// 2626dc87a3a8eb8fb7d2216198ce45bce0f9e65a, lines 238-252), restated:
//   - the output is stripped, split on newlines, and its lines deduplicated;
//   - a line with a colon splits on it into exactly a host and its slots,
//     which must be an integer (Python's int(); anything else raises);
//   - a line without one is a host with horovodrun's --slots-per-host,
//     which has no default (None): a line without slots, and no flag,
//     leaves the host with no slots, which the elastic driver then fails on;
//   - empty lines are skipped.
//
// Horovod itself cannot be installed here (no PyPI), so these rules stand
// in for it.
func horovodHosts(output string, slotsPerHost *int) (map[string]int, error) {
	hosts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(output), "\n") {
		if strings.Contains(line, ":") {
			parts := strings.Split(line, ":")
			if len(parts) != 2 {
				return nil, fmt.Errorf("ValueError: too many values to unpack: %q", line)
			}
			n, err := strconv.Atoi(strings.TrimSpace(parts[1]))
			if err != nil {
				return nil, fmt.Errorf("ValueError: invalid literal for int(): %q", parts[1])
			}
			hosts[parts[0]] = n
		} else if line != "" {
			if slotsPerHost == nil {
				return nil, errors.New("host " + line + " has no slots: horovodrun needs --slots-per-host")
			}
			hosts[line] = *slotsPerHost
		}
	}
	return hosts, nil
}

// echoed is what a discovery script prints: each echo line's word.
func echoed(script string) string {
	var b strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if word, ok := strings.CutPrefix(line, "echo "); ok {
			b.WriteString(word + "\n")
		}
	}
	return b.String()
}

func TestHorovodReadsEitherFormat(t *testing.T) {
	hosts := []Host{{Name: "j-worker-0.j", Slots: 4}, {Name: "j-worker-1.j", Slots: 4}}
	four := 4

	// training-operator v1's format: horovodrun as written.
	got, err := horovodHosts(echoed(DiscoverHosts(hosts, HostSlots)), nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"j-worker-0.j": 4, "j-worker-1.j": 4}, got)

	// mpi-operator v2's format: horovodrun needs --slots-per-host, and
	// then reads the same hosts.
	_, err = horovodHosts(echoed(DiscoverHosts(hosts, HostOnly)), nil)
	assert.ErrorContains(t, err, "--slots-per-host")
	got, err = horovodHosts(echoed(DiscoverHosts(hosts, HostOnly)), &four)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"j-worker-0.j": 4, "j-worker-1.j": 4}, got)

	// What the rules refuse, so that the reader above can fail.
	_, err = horovodHosts("a:1:2\n", nil)
	assert.Error(t, err)
	_, err = horovodHosts("a slots=4\n", &four)
	assert.NoError(t, err, "read as a host named \"a slots=4\", which no name resolves")
}
