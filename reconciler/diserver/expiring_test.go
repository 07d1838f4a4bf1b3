package diserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock is a time the test moves.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func TestExpiringForgetsAfterItsTime(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	cache := newExpiring[string, int](10*time.Second, 8, c.Now)
	cache.put("a", 1)
	c.now = c.now.Add(9 * time.Second)
	v, ok := cache.get("a")
	require.True(t, ok)
	require.Equal(t, 1, v)
	c.now = c.now.Add(time.Second)
	_, ok = cache.get("a")
	require.False(t, ok, "kept past its time")
	require.Zero(t, cache.len(), "an expired entry read stays")
}

func TestExpiringStaysItsSize(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	cache := newExpiring[int, bool](10*time.Second, 4, c.Now)
	for i := range 4 {
		cache.put(i, true)
	}
	// Full of live entries: one goes for each new one.
	for i := 4; i < 100; i++ {
		cache.put(i, true)
		require.Equal(t, 4, cache.len())
		_, ok := cache.get(i)
		require.True(t, ok, "the newest entry is kept")
	}
	// Full of expired entries: they all go at once.
	c.now = c.now.Add(time.Minute)
	cache.put(-1, true)
	require.Equal(t, 1, cache.len())
	// Putting a key again does not make room.
	cache.put(-1, false)
	v, _ := cache.get(-1)
	require.False(t, v)
	require.Equal(t, 1, cache.len())
}
