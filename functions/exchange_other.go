//go:build !linux

package functions

import "errors"

// exchange is not available here: the caller renames one path after the
// other.
func exchange(a, b string) error { return errors.ErrUnsupported }
