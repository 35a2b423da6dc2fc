// Package sqlq holds what the two SQL stores, store/sqlite and
// store/postgres, share: the text of their common statements, written once
// and bound to each dialect's placeholders when the program starts; the
// builders of the statements made per call (ListExecutions); the scanning
// of every row type; and the reads themselves (Reads), over a small DB
// interface each store implements on its own connections.
//
// What stays in each store is what only its driver does: connections and
// pools, SQLite's group-commit writer, PostgreSQL's advisory locks and
// liveness, the statements one dialect writes differently for a reason (a
// PostgreSQL CTE that spares a round trip, a SQLite UPDATE then SELECT that
// is cheaper than RETURNING), and the mapping of driver errors.
//
// Both stores keep times as int64 unix nanoseconds (0 is the zero time)
// and JSON as text (SQLite TEXT, PostgreSQL json); a Columns value gives
// each driver's scan destinations for those two.
package sqlq
