package main

import (
	"os"
	"runtime/debug"
	"syscall"
)

// peakRSS is the most memory a finished process held: Linux reports its
// maximum resident set size in kilobytes.
func peakRSS(state *os.ProcessState) int64 {
	if usage, ok := state.SysUsage().(*syscall.Rusage); ok {
		return usage.Maxrss << 10
	}
	return 0
}

// lowerOwnPeakRSS makes the next child's peak its own. Go starts a child
// as a vfork of the test process, and Linux counts the memory the child
// shared before exec into the child's peak: the test's own peak, often
// larger than a small child's. Returning free memory and resetting the
// peak (clear_refs 5) leaves only what the test holds now.
func lowerOwnPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
