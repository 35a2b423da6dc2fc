package validate

import "github.com/toolgate/toolgate/expr"

// readsState decides StateReader once, from the compiled expressions:
// any rule, lookup or quota expression that uses the variable state.
func (c *Compiled) readsState() bool {
	progs := []*expr.Program{c.OwnerExpect, c.VerifyFound, c.VerifyResult}
	for _, r := range c.Rules {
		progs = append(progs, r.Deny)
	}
	for _, p := range c.OwnerArgs {
		progs = append(progs, p)
	}
	for _, p := range c.VerifyArgs {
		progs = append(progs, p)
	}
	for _, q := range c.Quotas {
		progs = append(progs, q.Amount)
	}
	for _, p := range progs {
		if p.Uses("state") {
			return true
		}
	}
	return false
}

// Limited reports whether the tool's calls are admitted under limits that
// must hold when calls run in parallel: it is a state writer, or it has
// quotas.
func (c *Compiled) Limited() bool { return c.StateWriter || len(c.Quotas) > 0 }
