//go:build race

package functions

// raceEnabled makes the tests that run many jobs run fewer: under the race
// detector every job costs many times as much.
const raceEnabled = true
