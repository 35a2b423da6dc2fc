package store

// MigrationStatus is what `toolgate migrate --status` says of a store's
// schema: which of the migrations this binary carries are applied, which
// are pending (they run the next time a toolgate of this version opens the
// store), and whether the store is newer than the binary.
type MigrationStatus struct {
	// Backend is "sqlite" or "postgres".
	Backend string `json:"backend"`
	// Where names the store: the SQLite file, or the PostgreSQL schema.
	Where string `json:"where"`
	// Current is the store's schema version (0 for a new, empty store).
	Current int `json:"current"`
	// Known is the newest schema version this binary knows.
	Known int `json:"known"`
	// Migrations are this binary's migrations in order, each applied or not.
	Migrations []Migration `json:"migrations"`
}

// Migration is one schema step in a MigrationStatus.
type Migration struct {
	// Version is its number (1, 2, ...); Name its file name (0001_init.sql).
	Version int    `json:"version"`
	Name    string `json:"name"`
	// Applied is true when the store's schema has it.
	Applied bool `json:"applied"`
}

// Pending counts the migrations the store lacks.
func (s MigrationStatus) Pending() int {
	n := 0
	for _, m := range s.Migrations {
		if !m.Applied {
			n++
		}
	}
	return n
}

// Newer is true when the store was written by a newer toolgate: this
// binary refuses to open it.
func (s MigrationStatus) Newer() bool { return s.Current > s.Known }
