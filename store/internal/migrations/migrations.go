// Package migrations loads a store's embedded schema migrations: files
// named NNNN_what.sql, numbered from 1 without gaps. Each backend applies
// them its own way; the loading, the ordering and the refusal of a schema
// newer than the binary are the same for all.
package migrations

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/store"
)

// Migration is one schema step.
type Migration struct {
	// Version is the number of the file (1, 2, ...).
	Version int
	// Name is the file's name (0001_init.sql).
	Name string
	// SQL is the file's text.
	SQL string
}

// MustLoad reads fsys's migrations/*.sql in version order. A bad name, a gap
// in the numbers or a count other than want is a programming error: it
// panics (at start-up, in a package variable), naming the backend.
func MustLoad(backend string, fsys fs.FS, want int) []Migration {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	var out []Migration
	for _, name := range names {
		base := path.Base(name)
		number, _, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(number)
		if !ok || err != nil || version <= 0 {
			panic(fmt.Sprintf("%s: migration %s is not named NNNN_what.sql", backend, name))
		}
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			panic(err)
		}
		out = append(out, Migration{Version: version, Name: base, SQL: string(text)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			panic(fmt.Sprintf("%s: migration %s: want version %d (no gaps)", backend, m.Name, i+1))
		}
	}
	if len(out) != want {
		panic(fmt.Sprintf("%s: %d migrations embedded, the schema version is %d", backend, len(out), want))
	}
	return out
}

// SchemaVersionError is the answer of opening a database whose schema is
// newer than this binary knows: a newer toolgate wrote it. The database is
// left untouched.
type SchemaVersionError struct {
	// Found is the database's schema version; Known is the binary's.
	Found, Known int
}

// Error says what happened and what to do.
func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("the store's schema version is %d, newer than this toolgate knows (%d): a newer toolgate wrote it, and this one will not touch it. "+
		"Run the newer toolgate again, or restore the backup taken before the upgrade (docs/upgrade.md, \"Downgrading\")", e.Found, e.Known)
}

// Status lists ms as applied (version <= current) or pending.
func Status(backend, where string, current int, ms []Migration) store.MigrationStatus {
	st := store.MigrationStatus{Backend: backend, Where: where, Current: current, Known: len(ms)}
	for _, m := range ms {
		st.Migrations = append(st.Migrations, store.Migration{Version: m.Version, Name: m.Name, Applied: m.Version <= current})
	}
	return st
}
