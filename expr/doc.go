// Package expr is toolgate's small expression layer: CEL expressions
// (rules, lookup arguments, ownership and verify checks, state updates),
// brace templates (idempotency keys, rule messages), and exact JSON.
//
// Numbers stay exact everywhere. JSON is decoded with json.Number; inside
// CEL a number is an int when it fits int64, else a uint when it fits uint64,
// else a double; results come back as json.Number literals, so 425000 and
// 9007199254740993 are never rounded through float64. Canonical JSON keeps a
// number's literal as written (1.50 stays 1.50).
//
// An Env and the Programs and Templates made from it are immutable after
// construction and safe for concurrent use.
package expr
