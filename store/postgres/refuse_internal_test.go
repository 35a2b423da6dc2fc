package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A refused commit inside a batch aborts it with toolgate's own SQLSTATE
// (what a DBA reads in the server log), not a division by zero; and the
// writer tells that error from any other server error.
func TestRefusalHasToolgatesSQLState(t *testing.T) {
	s := openHooked(t, writerHooks{})
	ctx := t.Context()
	for _, tc := range []struct {
		name, query string
		refused     bool
	}{
		{"the refusal", "WITH inserted AS (SELECT 1 WHERE false) SELECT 1, 1 FROM inserted" + refuseLoudly, true},
		{"a division by zero", "SELECT 1 / (SELECT count(*) FROM runs WHERE false)", false},
		{"the statement that refuses nothing", "WITH inserted AS (SELECT 1) SELECT 1, 1 FROM inserted" + refuseLoudly, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := s.pool.Query(ctx, tc.query)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if got := isRefusedLoudly(err); got != tc.refused {
				t.Fatalf("isRefusedLoudly(%v) = %v, want %v", err, got, tc.refused)
			}
			var pgErr *pgconn.PgError
			if tc.refused && (!errors.As(err, &pgErr) || pgErr.Code != "TG001" || !strings.Contains(pgErr.Message, "toolgate: commit refused")) {
				t.Errorf("refusal error %v, want SQLSTATE TG001 and toolgate's message", err)
			}
		})
	}
}
