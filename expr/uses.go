package expr

import (
	"slices"

	"cel.dev/cel-go/cel"
)

// referencedVariables lists, sorted, the declared variables (args, state,
// ...) that the checked expression refers to, from the checker's
// references. It errs on the safe side: a comprehension variable that
// shadows a declared name ([1].exists(state, state > 0)) counts as a use.
func referencedVariables(ast *cel.Ast) []string {
	var out []string
	for _, ref := range ast.NativeRep().ReferenceMap() {
		if ref == nil || ref.Name == "" || !slices.Contains(variableNames, ref.Name) {
			continue
		}
		if !slices.Contains(out, ref.Name) {
			out = append(out, ref.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Uses reports whether the expression refers to the variable name (one of
// args, principal, state, result, run_id, call_id, tool). It is decided
// once, at compile time, from the checked expression; a nil Program uses
// nothing.
func (p *Program) Uses(name string) bool {
	return p != nil && slices.Contains(p.vars, name)
}
