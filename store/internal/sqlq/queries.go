package sqlq

// Queries are the statements both stores run, in one dialect's form: built
// once, at start-up (Dialect.Queries).
type Queries struct {
	// executions have no fixed statement: see ListExecutionsQuery.
}

// queriesFor binds the statements to d.
func queriesFor(d *Dialect) *Queries {
	return &Queries{}
}
