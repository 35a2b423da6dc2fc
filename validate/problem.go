package validate

import "strings"

// Problem is one thing wrong with a tool's configuration. Compile returns
// all of them, joined with errors.Join.
type Problem struct {
	// Tool is the tool's name; empty for a problem of an API key's tools:
	// list, whose whole path (auth.keys[0].tools[1]) is then Key.
	Tool string
	// Key is a dotted path inside the tool: input_schema, rules[0].deny,
	// owner.expect, idempotency.key, state.refund_id. Empty when the problem
	// is the tool as a whole.
	Key string
	// Why says what is wrong and, where it can, how to fix it.
	Why string
}

// Error formats the problem as "tools.issue_refund.rules[0].deny: <why>".
func (p *Problem) Error() string { return p.Path() + ": " + p.Why }

// Path is the problem's key path in the config:
// tools.issue_refund.rules[0].deny, or auth.keys[0].tools[1].
func (p *Problem) Path() string {
	if p.Tool == "" && strings.HasPrefix(p.Key, "auth.") {
		return p.Key
	}
	path := "tools." + p.Tool
	if p.Key != "" {
		path += "." + p.Key
	}
	return path
}
