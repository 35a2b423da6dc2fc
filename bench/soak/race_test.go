//go:build race

package soak_test

// raceEnabled builds the toolgate binary under test with the race detector
// too.
const raceEnabled = true
