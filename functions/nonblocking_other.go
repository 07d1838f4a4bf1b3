//go:build !unix

package functions

// nonBlocking is no flag here: named pipes are a Unix kind of file.
const nonBlocking = 0
