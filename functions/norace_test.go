//go:build !race

package functions

const raceEnabled = false
