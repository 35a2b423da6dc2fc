package sqlq

import "testing"

func TestBind(t *testing.T) {
	tests := []struct {
		name, query, sqlite string
	}{
		{"plain", `SELECT 1 FROM runs WHERE id = $1`, `SELECT 1 FROM runs WHERE id = ?1`},
		{"reused and out of order", `UPDATE t SET a = $2 WHERE b = $1 AND c > $2`, `UPDATE t SET a = ?2 WHERE b = ?1 AND c > ?2`},
		{"two digits", `VALUES ($9, $10, $11)`, `VALUES (?9, ?10, ?11)`},
		{"casts dropped", `SELECT SUM(a)::bigint WHERE $2::text = '' OR o = $2::text`, `SELECT SUM(a) WHERE ?2 = '' OR o = ?2`},
		{"quoted text kept", `SELECT '$1::x', "$2" WHERE k = $3`, `SELECT '$1::x', "$2" WHERE k = ?3`},
		{"quoted key", `SELECT "key" FROM operations WHERE "key" = $1`, `SELECT "key" FROM operations WHERE "key" = ?1`},
		{"dollar without digit", `SELECT $a, $`, `SELECT $a, $`},
		{"unclosed quote", `SELECT 'it's $1`, `SELECT 'it's ?1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SQLite.Bind(tt.query); got != tt.sqlite {
				t.Errorf("SQLite.Bind(%q)\n = %q\nwant %q", tt.query, got, tt.sqlite)
			}
			if got := PostgreSQL.Bind(tt.query); got != tt.query {
				t.Errorf("PostgreSQL.Bind(%q) = %q, want it unchanged", tt.query, got)
			}
		})
	}
}

func TestParam(t *testing.T) {
	tests := []struct {
		n                int
		sqlite, postgres string
	}{
		{1, "?1", "$1"},
		{10, "?10", "$10"},
		{11, "?11", "$11"},
		{123, "?123", "$123"},
	}
	for _, tt := range tests {
		if got := SQLite.Param(tt.n); got != tt.sqlite {
			t.Errorf("SQLite.Param(%d) = %q, want %q", tt.n, got, tt.sqlite)
		}
		if got := PostgreSQL.Param(tt.n); got != tt.postgres {
			t.Errorf("PostgreSQL.Param(%d) = %q, want %q", tt.n, got, tt.postgres)
		}
	}
}
