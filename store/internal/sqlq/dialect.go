package sqlq

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Dialect is the SQL flavour of one store: how a parameter is written and
// the few names that differ between the schemas.
type Dialect struct {
	// Name prefixes the store's errors ("sqlite", "postgres").
	Name string
	// numbered is true for $1, $2 ... (PostgreSQL), false for ?1, ?2 ...
	// (SQLite), where casts are also dropped.
	numbered bool
	// insertionOrder is the column that orders operations created at the
	// same instant by insertion.
	insertionOrder string
	// reservationOrder is the column that orders quota reservations made
	// at the same instant by insertion.
	reservationOrder string
	// principalID is the expression of a run's principal id (runs r).
	principalID string
	// queries are the shared statements in this dialect's form.
	queries *Queries
}

func init() {
	SQLite.queries = queriesFor(SQLite)
	PostgreSQL.queries = queriesFor(PostgreSQL)
}

// Queries are the shared statements in d's form, built at start-up.
func (d *Dialect) Queries() *Queries { return d.queries }

// SQLite is the dialect of store/sqlite: parameters ?1, ?2 ..., no casts
// (columns have affinity), operations and reservations in rowid
// order.
var SQLite = &Dialect{Name: "sqlite", insertionOrder: "rowid", reservationOrder: "rowid",
	principalID: "json_extract(r.principal, '$.id')"}

// PostgreSQL is the dialect of store/postgres: parameters $1, $2 ..., casts
// kept, operations in seq order, reservations in id order.
var PostgreSQL = &Dialect{Name: "postgres", numbered: true, insertionOrder: "seq", reservationOrder: "id",
	principalID: "(r.principal->>'id')"}

// Param is the placeholder of the n-th parameter (from 1) of a statement
// built per call, whose parameters come in order: $n for PostgreSQL, a
// plain ? for SQLite (see Bind).
func (d *Dialect) Param(n int) string {
	if !d.numbered {
		return "?"
	}
	if n < len(dollarParams) {
		return dollarParams[n]
	}
	return "$" + strconv.Itoa(n)
}

// dollarParams spell the first placeholders once.
var dollarParams = [...]string{"$0", "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "$10"}

// Bind returns query, written with PostgreSQL's numbered parameters ($1,
// $2, ...) and casts (::bigint), in d's form: unchanged for PostgreSQL; for
// SQLite each cast is dropped and each $n becomes a plain ? when the
// parameters come in order ($1, $2, ... each once), else ?n (the same
// number, so that a parameter may be used twice). The plain form is the
// cheaper: the SQLite driver fetches the name of every named parameter,
// on every execution. Quoted text ('...', "...") is left as it is. Bind is
// meant for package variables, run once at start-up.
func (d *Dialect) Bind(query string) string {
	if d.numbered {
		return query
	}
	plain := inOrder(query)
	var b strings.Builder
	b.Grow(len(query))
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			i += end + 1
		case c == '$' && i+1 < len(query) && isDigit(query[i+1]):
			b.WriteByte('?')
			for plain && i+1 < len(query) && isDigit(query[i+1]) {
				i++
			}
		case c == ':' && i+1 < len(query) && query[i+1] == ':':
			i++
			for i+1 < len(query) && isWordByte(query[i+1]) {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// inOrder reports whether the parameters of query, outside quoted text,
// are $1, $2, ... in that order, each once.
func inOrder(query string) bool {
	want := 1
	for i := 0; i < len(query); i++ {
		switch c := query[i]; {
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				return true
			}
			i += end + 1
		case c == '$' && i+1 < len(query) && isDigit(query[i+1]):
			j := i + 1
			for j < len(query) && isDigit(query[j]) {
				j++
			}
			if n, err := strconv.Atoi(query[i+1 : j]); err != nil || n != want {
				return false
			}
			want++
			i = j - 1
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// JSONArg is raw as the parameter of a nullable JSON column, byte for byte:
// nil is NULL; so is an empty raw for PostgreSQL (an empty text is no JSON
// document there), while SQLite keeps it as an empty TEXT.
func (d *Dialect) JSONArg(raw json.RawMessage) any {
	if raw == nil || d.numbered && len(raw) == 0 {
		return nil
	}
	return string(raw)
}
