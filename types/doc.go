// Package types holds the plain values that every stage of the toolgate
// pipeline shares: a call, its result envelope, the stable error codes, a run,
// an execution row and an operation record.
//
// It is a leaf package: it imports nothing of toolgate's own, so that
// validate, execute, retry, envelope, observe, monitor and state can all use
// it without import cycles.
package types
