//go:build race

package mcpserver_test

// raceEnabled builds the binary under test with the race detector too.
const raceEnabled = true
