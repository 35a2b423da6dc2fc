package postgres

import "testing"

// The embedded migrations load, in order, up to SchemaVersion (the checks of
// names and gaps are store/internal/migrations' tests).
func TestMigrationsLoad(t *testing.T) {
	if len(embedded) != SchemaVersion || embedded[0].Name != "0001_init.sql" {
		t.Fatalf("embedded migrations = %d, first %q", len(embedded), embedded[0].Name)
	}
}
