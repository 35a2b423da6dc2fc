package load

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/bench/serveproc"
)

// pgCluster is the PostgreSQL database of path (e): a fresh schema,
// dropped at the end, and the cluster's postmaster, whose process tree's
// CPU is the database's share of a call.
type pgCluster struct {
	conn     *pgx.Conn
	schema   string
	storeURL string
	// postmaster is the cluster's parent process; 0 when it is not on
	// this machine (its CPU is then not measured).
	postmaster int
}

// openPostgres makes a fresh schema in the database of pgURL and finds
// the cluster's postmaster: the parent of this connection's backend.
func openPostgres(ctx context.Context, pgURL string) (*pgCluster, error) {
	u, err := url.Parse(pgURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("load: Postgres must be a postgres:// URL, not %q", pgURL)
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return nil, fmt.Errorf("load: connect to PostgreSQL: %w", err)
	}
	c := &pgCluster{conn: conn, schema: fmt.Sprintf("bench_load_%d", time.Now().UnixNano())}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{c.schema}.Sanitize()); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("load: create schema: %w", err)
	}
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		c.close()
		return nil, err
	}
	if t, err := readProc(backend); err == nil {
		c.postmaster = t.ppid
	}
	q := u.Query()
	q.Set("search_path", c.schema)
	u.RawQuery = q.Encode()
	c.storeURL = u.String()
	return c, nil
}

// meter reads the cluster's CPU so far; nil when the postmaster is not on
// this machine.
func (c *pgCluster) meter() cpuMeter {
	if c.postmaster == 0 {
		return nil
	}
	return func() (time.Duration, error) { return TreeCPU(c.postmaster) }
}

// close drops the schema.
func (c *pgCluster) close() {
	ctx := context.Background()
	_, _ = c.conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{c.schema}.Sanitize()+" CASCADE")
	c.conn.Close(ctx)
}

// addPostgresPath starts path (e) (startPostgresPath), makes its runs and
// adds its target, meters and pid; the func it returns stops the server
// and drops the schema.
func addPostgresPath(ctx context.Context, o *Options, cl *http.Client, depURL string, maxConc int,
	targets map[Path]*target, m map[Path]meters, pids map[Path]int) (func(), error) {
	pg, srv, err := startPostgresPath(ctx, o, depURL)
	if err != nil {
		return nil, err
	}
	stop := func() {
		_ = srv.Stop(time.Minute)
		pg.close()
	}
	runs, err := createRuns(ctx, cl, srv.URL, "pgwrite", maxConc)
	if err != nil {
		stop()
		return nil, err
	}
	targets[PGWrite] = callTarget(PGWrite, srv.URL, runs, writeBody)
	m[PGWrite] = meters{server: processMeter(srv.Pid()), db: pg.meter()}
	pids[PGWrite] = srv.Pid()
	return stop, nil
}

// startPostgresPath makes path (e)'s schema and starts its `toolgate
// serve` on it, with its config in a directory of its own.
func startPostgresPath(ctx context.Context, o *Options, depURL string) (*pgCluster, *serveproc.Process, error) {
	pg, err := openPostgres(ctx, o.Postgres)
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(o.Dir, "postgres")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		pg.close()
		return nil, nil, err
	}
	cfg := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(cfg, Config(pg.storeURL, depURL), 0o600); err != nil {
		pg.close()
		return nil, nil, err
	}
	srv, err := serveproc.Start(ctx, serveproc.Options{Binary: o.Binary, Config: cfg, Args: o.ServeArgs})
	if err != nil {
		pg.close()
		return nil, nil, err
	}
	return pg, srv, nil
}
