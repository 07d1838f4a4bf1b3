//go:build unix

package functions

import "syscall"

// nonBlocking opens a named pipe without waiting for a writer, so that
// one found where a regular file was expected is refused, not waited on.
const nonBlocking = syscall.O_NONBLOCK
