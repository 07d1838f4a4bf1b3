package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// firstCollection is how much memory trainfn may take before its first
// garbage collection.
const firstCollection = 64 << 20

// deferCollection puts off the first garbage collection until the heap
// reaches firstCollection, then collects as Go does by default.
//
// An orchestrator starts trainfn once per build, and most builds render a
// few jobs: Go's default would collect at 4 MiB and again at 8, a fifth of
// such a run's time on two cores, to free memory that exiting frees
// anyway. Larger runs pass the bound within milliseconds and are collected
// as before, so their peak memory stays where it was. GOGC or GOMEMLIMIT,
// when set, are left to rule.
func deferCollection() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(firstCollection)
	// The sentinel is garbage from the start: the first collection,
	// whichever triggers it, finds it and restores the defaults.
	runtime.SetFinalizer(new([16]byte), func(*[16]byte) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}
