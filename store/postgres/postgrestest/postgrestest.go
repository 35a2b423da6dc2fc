// Package postgrestest gives tests and benchmarks a PostgreSQL store in a
// schema of its own, so that test packages running in parallel on one
// server never see each other's rows.
//
// The server is named by the environment variable TOOLGATE_TEST_POSTGRES
// (scripts/with-postgres.sh starts a throwaway one and sets it; `make test`
// runs every test under it). When it is unset the test is skipped, unless
// CI=true: then it fails, so that CI cannot skip PostgreSQL silently.
package postgrestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/postgres"
)

// EnvVar names the environment variable that holds the test server's URL.
const EnvVar = "TOOLGATE_TEST_POSTGRES"

// URL returns the test server's URL. Without one it skips tb, or fails it
// when the environment variable CI is "true".
func URL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv(EnvVar)
	if url == "" {
		const why = EnvVar + " is not set: no PostgreSQL to test against (run under scripts/with-postgres.sh, as `make test` does)"
		if os.Getenv("CI") == "true" {
			tb.Fatal(why + "; CI=true, so this is a failure, not a skip")
		}
		tb.Skip(why)
	}
	return url
}

// Schema returns a fresh schema name (toolgate_test_<random>) and drops
// that schema, if it was created, when tb ends. It does not create it.
func Schema(tb testing.TB, url string) string {
	tb.Helper()
	var random [8]byte
	_, _ = rand.Read(random[:])
	name := "toolgate_test_" + hex.EncodeToString(random[:])
	tb.Cleanup(func() {
		if err := Exec(url, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("drop test schema %s: %v", name, err)
		}
	})
	return name
}

// Open returns a store in a fresh schema of the test server and closes it
// (then drops the schema) when tb ends. opts.Schema is set by Open; an
// empty opts.Owner is "test".
func Open(tb testing.TB, opts postgres.Options) *postgres.Store {
	tb.Helper()
	url := URL(tb)
	opts.Schema = Schema(tb, url)
	if opts.Owner == "" {
		opts.Owner = "test"
	}
	s, err := postgres.Open(tb.Context(), url, opts)
	if err != nil {
		tb.Fatalf("postgres.Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

// Exec runs one statement on a connection of its own, closed afterwards
// (cleanups run after the test's context is done, so it takes none).
func Exec(url, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, args...)
	return err
}
