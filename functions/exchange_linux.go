package functions

import "golang.org/x/sys/unix"

// exchange swaps two existing paths in one step (renameat2 with
// RENAME_EXCHANGE). It fails when either is missing or the file system
// cannot do it, and the caller then renames one after the other.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
