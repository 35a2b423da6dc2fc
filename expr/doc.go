// Package expr is toolgate's small expression layer: CEL expressions
// (rules, lookup arguments, ownership and verify checks, state updates) and
// brace templates (idempotency keys, rule messages), over exact JSON values.
//
// Numbers stay exact everywhere. JSON is decoded with json.Number (by
// internal/jsontext, which also writes canonical JSON, keeping a number's
// literal as written: 1.50 stays 1.50); inside CEL a number is an int when
// it fits int64, else a uint when it fits uint64, else a double; results
// come back as json.Number literals, so 425000 and 9007199254740993 are
// never rounded through float64.
//
// An Env and the Programs and Templates made from it are immutable after
// construction and safe for concurrent use.
package expr
