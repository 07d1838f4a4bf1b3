package handoff

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseBounds(t *testing.T) {
	b, err := ParseBounds("2:8")
	assert.NoError(t, err)
	assert.Equal(t, Bounds{Min: 2, Max: 8}, b)
	assert.Equal(t, "2:8", b.String())
	for _, bad := range []string{"", "2", "8:2", "0:4", "1:100001", "a:b", "2:8:9"} {
		_, err := ParseBounds(bad)
		assert.Error(t, err, "%q", bad)
	}
}
