package sqlq

import (
	"errors"
	"testing"
)

func TestBind(t *testing.T) {
	tests := []struct {
		name, query, sqlite string
	}{
		{"one", `SELECT 1 FROM runs WHERE id = $1`, `SELECT 1 FROM runs WHERE id = ?`},
		{"in order", `VALUES ($1, $2, 0, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, `VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{"reused", `UPDATE t SET a = $1, b = $2 WHERE c > $2`, `UPDATE t SET a = ?1, b = ?2 WHERE c > ?2`},
		{"out of order", `UPDATE t SET a = $2 WHERE b = $1`, `UPDATE t SET a = ?2 WHERE b = ?1`},
		{"not from one", `VALUES ($9, $10, $11)`, `VALUES (?9, ?10, ?11)`},
		{"casts dropped", `SELECT SUM(a)::bigint WHERE $1::text = '' OR o = $1::text`, `SELECT SUM(a) WHERE ?1 = '' OR o = ?1`},
		{"casts dropped in order", `WHERE $1::bigint - freed + $2::bigint <= $3::bigint`, `WHERE ? - freed + ? <= ?`},
		{"quoted text kept", `SELECT '$2::x', "$3" WHERE k = $1`, `SELECT '$2::x', "$3" WHERE k = ?`},
		{"quoted key", `SELECT "key" FROM operations WHERE "key" = $1 AND x = $1`, `SELECT "key" FROM operations WHERE "key" = ?1 AND x = ?1`},
		{"dollar without digit", `SELECT $a, $`, `SELECT $a, $`},
		{"unclosed quote", `SELECT 'it's $1`, `SELECT 'it's ?`},
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
		{1, "?", "$1"},
		{10, "?", "$10"},
		{11, "?", "$11"},
		{123, "?", "$123"},
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

// TestSlotNeed: an admission's operation lookup decides whether the call
// takes the state-writer slot: a new operation does, a repeat of an
// unknown one does, a repeat that waits or replays does not, and a failed
// lookup is an error.
func TestSlotNeed(t *testing.T) {
	noRows, broken := errors.New("no rows"), errors.New("connection lost")
	tests := []struct {
		name          string
		wants         bool
		status        string
		err           error
		exists, needs bool
		fails         bool
	}{
		{"new operation", true, "", noRows, false, true, false},
		{"new operation, no slot wanted", false, "", noRows, false, false, false},
		{"repeat of an unknown", true, "unknown", nil, true, true, false},
		{"repeat of a completed", true, "completed", nil, true, false, false},
		{"repeat of a started", true, "started", nil, true, false, false},
		{"lookup failed", true, "", broken, false, false, true},
	}
	for _, tt := range tests {
		exists, needs, err := SlotNeed(tt.wants, tt.status, tt.err, noRows)
		if exists != tt.exists || needs != tt.needs || (err != nil) != tt.fails {
			t.Errorf("%s: SlotNeed = %v, %v, %v; want %v, %v, fails %v", tt.name, exists, needs, err, tt.exists, tt.needs, tt.fails)
		}
	}
}
