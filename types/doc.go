// Package types holds the plain values that every stage of the toolgate
// pipeline shares: a call, its result envelope with its constructors (OK,
// Fail, Panic, Data), the stable error codes, a run, an execution row and an
// operation record.
//
// It is a leaf package: of toolgate's own it imports only internal/jsontext
// (itself a leaf, the JSON string and number encoding), so that validate,
// execute, retry, normalise, feedback, monitor and state can all use it
// without import cycles.
package types
