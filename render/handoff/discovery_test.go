package handoff

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDiscoverHosts(t *testing.T) {
	hosts := []Host{{Name: "j-worker-0.j", Slots: 4}, {Name: "j-worker-1.j", Slots: 0}}
	script := DiscoverHosts(hosts)
	assert.Equal(t, "#!/bin/sh\necho j-worker-0.j:4\necho j-worker-1.j:0\n", script)
	assert.Equal(t, hosts, ParseDiscoverHosts(script), "the parser reads back what the writer wrote")
	assert.Empty(t, ParseDiscoverHosts(DiscoverHosts(nil)))
	assert.Equal(t, []Host{{Name: "a.j", Slots: 2}}, ParseDiscoverHosts("#!/bin/sh\n# echo b.j:1\necho a.j:2\necho c.j\n"),
		"lines that are not a host's are not read as one")
}
