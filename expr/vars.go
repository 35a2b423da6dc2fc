package expr

import (
	"cel.dev/cel-go/interpreter"

	"github.com/toolgate/toolgate/types"
)

// Vars are what expressions and templates see. Numbers inside Args, State,
// Result and Principal.Attrs are json.Number (as toolgate's decoder,
// internal/jsontext, makes them). A nil *Vars, nil maps and a nil Principal
// all read as empty, so has(state.x) and has(principal.limits.x) work
// without them.
type Vars struct {
	// Args are the decoded call arguments.
	Args map[string]any
	// Principal is who the run acts for; in CEL it is a map with id,
	// permissions (a list), limits (numbers) and attrs.
	Principal *types.Principal
	// State is the decoded run state; nil means empty.
	State map[string]any
	// Result is the decoded lookup or tool result data; nil when there is
	// none (it reads as null).
	Result any
	// RunID, CallID and Tool identify the call.
	RunID, CallID, Tool string
}

// emptyObject stands in for a nil map. CEL never mutates its inputs.
var emptyObject = map[string]any{}

// activation resolves the declared variables from Vars on demand, so an
// expression pays only for the variables it reads.
type activation struct{ v *Vars }

// ResolveName implements interpreter.Activation.
func (a activation) ResolveName(name string) (any, bool) {
	v := a.v
	if v == nil {
		v = &Vars{}
	}
	switch name {
	case "args":
		return objectOrEmpty(v.Args), true
	case "state":
		return objectOrEmpty(v.State), true
	case "result":
		return v.Result, true
	case "principal":
		return principalValue(v.Principal), true
	case "run_id":
		return v.RunID, true
	case "call_id":
		return v.CallID, true
	case "tool":
		return v.Tool, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (activation) Parent() interpreter.Activation { return nil }

func objectOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return emptyObject
	}
	return m
}

// principalValue is the principal as CEL sees it.
func principalValue(p *types.Principal) map[string]any {
	if p == nil {
		p = &types.Principal{}
	}
	perms := make([]any, len(p.Permissions))
	for i, s := range p.Permissions {
		perms[i] = s
	}
	return map[string]any{
		"id":          p.ID,
		"permissions": perms,
		"limits":      p.Limits,
		"attrs":       objectOrEmpty(p.Attrs),
	}
}
