package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first collection restores Go's defaults: deferring it must not turn
// collection off for a run that outgrows the bound.
func TestDeferCollectionRestoresTheDefaults(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	deferCollection()
	require.Equal(t, -1, gcPercent(), "collection is put off")
	require.EqualValues(t, firstCollection, debug.SetMemoryLimit(-1), "until the heap reaches the bound")
	runtime.GC()
	// The finalizer runs on its own goroutine after the collection.
	deadline := time.Now().Add(time.Minute)
	for gcPercent() == -1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, 100, gcPercent())
	assert.EqualValues(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
}

// GOGC or GOMEMLIMIT, set by the user, rule.
func TestDeferCollectionKeepsTheUsersSettings(t *testing.T) {
	t.Setenv("GOGC", "50")
	before := gcPercent()
	deferCollection()
	assert.Equal(t, before, gcPercent())
}

// gcPercent reads the GC percent, which only setting it tells.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}
