// Package expiring is a cache of answers that may change (a review of a
// token, of a right), kept for a while and bounded in size: its keys are
// chosen by whoever calls the reconciler's APIs.
package expiring

import (
	"sync"
	"time"
)

// Cache remembers values for a while, and at most a number of them: a
// cache of reviews whose answers may change (a token revoked, a role
// removed), and whose keys a stranger chooses (any token), so it must not
// grow without bound.
type Cache[K comparable, V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[K]entry[V]
}

type entry[V any] struct {
	value   V
	expires time.Time
}

// New is a cache that keeps a value for ttl, and at most maxEntries of
// them.
func New[K comparable, V any](ttl time.Duration, maxEntries int, now func() time.Time) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, max: maxEntries, now: now, entries: map[K]entry[V]{}}
}

// Get is the value of key, unless it has expired or was never put.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.now().Before(e.expires) {
		delete(c.entries, key)
		var zero V
		return zero, false
	}
	return e.value, true
}

// Put remembers value under key for the cache's time. When full, it
// forgets the expired entries, then, if none had, one at random: under a
// flood of new keys the cache stays its size and merely stops helping.
func (c *Cache[K, V]) Put(key K, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = entry[V]{value: value, expires: now.Add(c.ttl)}
}

// Len is how many entries the cache holds, expired or not.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
