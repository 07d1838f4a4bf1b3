package allocator

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResources(t *testing.T) {
	room := Resources{MilliCPU: 4000, Memory: 8 << 30, GPU: 1}
	worker := Resources{MilliCPU: 1500, Memory: 2 << 30}

	assert.True(t, worker.FitsIn(room))
	assert.True(t, room.FitsIn(room), "an exact fit fits")
	assert.False(t, Resources{GPU: 2}.FitsIn(room), "one resource short is short")
	assert.False(t, Resources{}.FitsIn(Resources{Memory: -1}), "nothing fits in an overdrawn room")

	left := room.Sub(worker)
	assert.Equal(t, Resources{MilliCPU: 2500, Memory: 6 << 30, GPU: 1}, left)
	assert.Equal(t, room, left.Add(worker))
	assert.False(t, worker.FitsIn(left.Sub(worker).Sub(worker)))
}
