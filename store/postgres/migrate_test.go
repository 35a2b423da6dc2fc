package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/store/storeurl"
	"github.com/toolgate/toolgate/types"
)

// TestConcurrentOpenMigratesOnce: four replicas start at once on a schema
// that does not exist yet. The advisory lock makes them migrate one after
// the other: all open, the migrations are applied once, and the stores
// share the tables.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	url := postgrestest.URL(t)
	schema := postgrestest.Schema(t, url)
	const replicas = 4
	stores := make([]*postgres.Store, replicas)
	errs := make([]error, replicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = postgres.Open(t.Context(), url, postgres.Options{Schema: schema, Owner: "replica"})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: Open: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}

	var versions, applied int
	row := queryRow(t, url, "SELECT count(*), max(version) FROM "+pgx.Identifier{schema, "schema_migrations"}.Sanitize())
	if err := row(&applied, &versions); err != nil {
		t.Fatal(err)
	}
	if applied != postgres.SchemaVersion || versions != postgres.SchemaVersion {
		t.Errorf("schema_migrations: %d rows, version %d; want %d and %d", applied, versions, postgres.SchemaVersion, postgres.SchemaVersion)
	}

	// One database: a run created through one replica is seen by another,
	// and a key begun by one is taken for the others.
	if err := stores[0].CreateRun(t.Context(), &types.Run{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[3].GetRun(t.Context(), "r"); err != nil {
		t.Fatalf("replica 3 does not see replica 0's run: %v", err)
	}
	op := &types.Operation{Key: "k", ArgsHash: "h", RunID: "r", Tool: "t"}
	if _, began, err := stores[1].BeginOperation(t.Context(), op); err != nil || !began {
		t.Fatalf("replica 1 BeginOperation = %v, %v", began, err)
	}
	if existing, began, err := stores[2].BeginOperation(t.Context(), op); err != nil || began || existing.Owner != "replica" {
		t.Fatalf("replica 2 BeginOperation = %+v, %v, %v; want replica 1's record", existing, began, err)
	}
}

// TestReopenKeepsData: opening an up-to-date schema changes nothing.
func TestReopenKeepsData(t *testing.T) {
	url := postgrestest.URL(t)
	schema := postgrestest.Schema(t, url)
	first, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.CreateRun(t.Context(), &types.Run{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	first.Close()
	again, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.GetRun(t.Context(), "r"); err != nil {
		t.Fatalf("GetRun after reopening: %v", err)
	}
}

// TestNewerSchemaRefused: a schema migrated by a newer toolgate is refused
// and left as it is.
func TestNewerSchemaRefused(t *testing.T) {
	url := postgrestest.URL(t)
	schema := postgrestest.Schema(t, url)
	s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	table := pgx.Identifier{schema, "schema_migrations"}.Sanitize()
	newer := postgres.SchemaVersion + 1
	if err := postgrestest.Exec(url, "INSERT INTO "+table+" (version, name) VALUES ($1, 'from_the_future.sql')", newer); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(t.Context(), url, postgres.Options{Schema: schema})
	var versionErr *postgres.SchemaVersionError
	if !errors.As(err, &versionErr) || versionErr.Found != newer || versionErr.Known != postgres.SchemaVersion {
		t.Fatalf("Open on a newer schema = %v, want a SchemaVersionError %d > %d", err, newer, postgres.SchemaVersion)
	}
	var count int
	if err := queryRow(t, url, "SELECT count(*) FROM "+table)(&count); err != nil || count != postgres.SchemaVersion+1 {
		t.Errorf("schema_migrations has %d rows after the refusal (%v), want it untouched", count, err)
	}
}

// TestSearchPathSchema: without Options.Schema the tables go to the
// connection's search_path, here given in the URL.
func TestSearchPathSchema(t *testing.T) {
	url := postgrestest.URL(t)
	schema := postgrestest.Schema(t, url)
	if err := postgrestest.Exec(url, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(t.Context(), url+"&search_path="+schema, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Schema() != schema {
		t.Errorf("Schema() = %q, want %q", s.Schema(), schema)
	}
	if err := s.CreateRun(t.Context(), &types.Run{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := queryRow(t, url, "SELECT count(*) FROM "+pgx.Identifier{schema, "runs"}.Sanitize())(&n); err != nil || n != 1 {
		t.Errorf("runs in %s = %d, %v; want 1", schema, n, err)
	}
}

// TestOpenBadURL: a URL that does not parse is refused without echoing it
// (it may hold a password).
func TestOpenBadURL(t *testing.T) {
	_, err := postgres.Open(t.Context(), "postgres://user:s3cret@[::1", postgres.Options{})
	if err == nil {
		t.Fatal("Open accepted a broken URL")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q leaks the password", err)
	}
}

// queryRow runs a one-row query on its own connection and returns its
// Scan.
func queryRow(t *testing.T, url, sql string) func(dest ...any) error {
	t.Helper()
	return func(dest ...any) error {
		conn, err := pgx.Connect(t.Context(), url)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		return conn.QueryRow(t.Context(), sql).Scan(dest...)
	}
}

// TestStoreURL: the config's `store: postgres://...` opens this store, and
// opening abandons nothing: another replica's started operation stays
// started.
func TestStoreURL(t *testing.T) {
	url := postgrestest.URL(t)
	schema := postgrestest.Schema(t, url)
	if err := postgrestest.Exec(url, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	url += "&search_path=" + schema
	other, err := storeurl.Open(t.Context(), url, storeurl.Options{Owner: "replica-a", Recover: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, ok := other.(*postgres.Store); !ok {
		t.Fatalf("storeurl.Open(postgres://...) = %T, want *postgres.Store", other)
	}
	op := &types.Operation{Key: "k", ArgsHash: "h", RunID: "r", Tool: "t", LeaseUntil: time.Now().Add(time.Hour)}
	if _, began, err := other.BeginOperation(t.Context(), op); err != nil || !began {
		t.Fatalf("BeginOperation = %v, %v", began, err)
	}
	second, err := storeurl.Open(t.Context(), url, storeurl.Options{Owner: "replica-b", Recover: true})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	got, err := second.GetOperation(t.Context(), "k")
	if err != nil || got.Status != types.OpStarted || got.Owner != "replica-a" {
		t.Fatalf("operation after another replica opened = %+v, %v; want started by replica-a", got, err)
	}
}
