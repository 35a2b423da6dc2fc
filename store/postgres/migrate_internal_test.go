package postgres

import (
	"testing"
	"testing/fstest"
)

func TestMigrationsLoad(t *testing.T) {
	if len(migrations) != SchemaVersion || migrations[0].name != "0001_init.sql" {
		t.Fatalf("embedded migrations = %d, first %q", len(migrations), migrations[0].name)
	}
}

func TestMigrationNamesChecked(t *testing.T) {
	cases := map[string]fstest.MapFS{
		"gap": {
			"migrations/0001_init.sql":  {Data: []byte("SELECT 1;")},
			"migrations/0003_later.sql": {Data: []byte("SELECT 1;")},
		},
		"bad name": {"migrations/init.sql": {Data: []byte("SELECT 1;")}},
		"none":     {},
	}
	for name, fsys := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("mustLoadMigrations accepted it")
				}
			}()
			mustLoadMigrations(fsys)
		})
	}
}
