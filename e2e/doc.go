// Package e2e holds the end-to-end tests of the toolgate server: they build
// the real binary once, start `toolgate serve` against a simulated payment
// provider on 127.0.0.1, and drive every endpoint and every error code
// reachable over HTTP, bad input, and a SIGTERM during calls in flight.
//
// The package has no code of its own; everything is in its tests.
package e2e
