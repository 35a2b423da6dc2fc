package migrations

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestMustLoad(t *testing.T) {
	good := fstest.MapFS{
		"migrations/0002_more.sql": {Data: []byte("SELECT 2;")},
		"migrations/0001_init.sql": {Data: []byte("SELECT 1;")},
	}
	ms := MustLoad("test", good, 2)
	if len(ms) != 2 || ms[0].Name != "0001_init.sql" || ms[1].Version != 2 || ms[1].SQL != "SELECT 2;" {
		t.Fatalf("loaded %+v", ms)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"gap": {
			"migrations/0001_init.sql":  {Data: []byte("SELECT 1;")},
			"migrations/0003_later.sql": {Data: []byte("SELECT 1;")},
		},
		"bad name": {"migrations/init.sql": {Data: []byte("SELECT 1;")}},
		"count":    {"migrations/0001_init.sql": {Data: []byte("SELECT 1;")}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("MustLoad accepted it")
				}
			}()
			MustLoad("test", fsys, 2)
		})
	}
}

func TestSchemaVersionError(t *testing.T) {
	e := &SchemaVersionError{Found: 7, Known: 4}
	if !strings.HasPrefix(e.Error(), "the store's schema version is 7, newer than this toolgate knows (4): ") || !strings.Contains(e.Error(), "docs/upgrade.md") {
		t.Errorf("message: %s", e.Error())
	}
}
