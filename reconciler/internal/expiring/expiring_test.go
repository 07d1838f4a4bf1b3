package expiring

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock is a time the test moves.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func TestForgetsAfterItsTime(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	cache := New[string, int](10*time.Second, 8, c.Now)
	cache.Put("a", 1)
	c.now = c.now.Add(9 * time.Second)
	v, ok := cache.Get("a")
	require.True(t, ok)
	require.Equal(t, 1, v)
	c.now = c.now.Add(time.Second)
	_, ok = cache.Get("a")
	require.False(t, ok, "kept past its time")
	require.Zero(t, cache.Len(), "an expired entry read stays")
}

func TestStaysItsSize(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	cache := New[int, bool](10*time.Second, 4, c.Now)
	for i := range 4 {
		cache.Put(i, true)
	}
	// Full of live entries: one goes for each new one.
	for i := 4; i < 100; i++ {
		cache.Put(i, true)
		require.Equal(t, 4, cache.Len())
		_, ok := cache.Get(i)
		require.True(t, ok, "the newest entry is kept")
	}
	// Full of expired entries: they all go at once.
	c.now = c.now.Add(time.Minute)
	cache.Put(-1, true)
	require.Equal(t, 1, cache.Len())
	// Putting a key again does not make room.
	cache.Put(-1, false)
	v, _ := cache.Get(-1)
	require.False(t, v)
	require.Equal(t, 1, cache.Len())
}
