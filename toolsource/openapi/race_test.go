//go:build race

package openapi

// raceEnabled: the tests run with the race detector.
const raceEnabled = true
