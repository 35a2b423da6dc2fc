package e2e

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/toolgate/toolgate/bench/faultcheck"
	"github.com/toolgate/toolgate/internal/faultproxy"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/types"
)

// pgCallers is the steady load of the PostgreSQL fault scenarios: callers
// of distinct writes (and their repeats, and reads), as docs/reliability-
// postgres.md describes.
const pgCallers = 20

// pgFaultRun runs one fault run of the real binary on the PostgreSQL
// store storeURL under pgCallers callers, with faults from schedule
// (which ignores the provider's proxy it is given), and fails t on every
// broken promise of the whole-history check (faultcheck.Check).
func pgFaultRun(t *testing.T, storeURL string, faults ...*faultcheck.Fault) *faultcheck.Result {
	t.Helper()
	res, err := faultcheck.Run(context.Background(), faultcheck.Options{
		Binary: binary, Dir: t.TempDir(), Store: storeURL, Callers: pgCallers, Pace: 100 * time.Millisecond,
		Schedule: func(*faultproxy.Proxy) func(int) *faultcheck.Fault { return faultcheck.FixedSchedule(faults...) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d faults, %d calls (%d answered) %v; effects %d, ledger %d, duplicates %d, lost %d, missing rows %d, unsettled %d, unknown unmade %d, reconciled %d, worst recovery %s, worst over budget %s, late duplicate_in_flight %d",
		len(res.Faults), res.Calls, res.Answered, res.Codes, res.Effects, res.LedgerOps, res.Duplicates, res.Lost, res.MissingRows,
		res.Unsettled, res.UnknownUnmade, res.Reconciled, res.WorstRecovery.Round(time.Millisecond), res.WorstOver.Round(time.Millisecond), res.LateInFlight)
	for _, v := range res.Violations {
		t.Error(v)
	}
	if len(res.Faults) != len(faults) {
		t.Fatalf("%d faults applied, want %d", len(res.Faults), len(faults))
	}
	return res
}

// pgSchemaURL opens (migrates) a fresh schema of the PostgreSQL test
// server and returns the server's URL with that schema as search_path and
// host replaced by host (a fault proxy), when host is not "".
func pgSchemaURL(t *testing.T, host string) (storeURL string, upstream string) {
	t.Helper()
	st := postgrestest.Open(t, postgres.Options{Owner: "e2e-faults"})
	u, err := url.Parse(postgrestest.URL(t))
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL", postgrestest.EnvVar)
	}
	upstream = u.Host
	if host != "" {
		u.Host = host
	}
	q := u.Query()
	q.Set("search_path", st.Schema())
	u.RawQuery = q.Encode()
	return u.String(), upstream
}

// TestPostgresBlackhole: PostgreSQL blackholed for 5 s (the proxy between
// toolgate and the database accepts and carries no byte), then every
// connection reset, then healthy, under 20 callers. No call waits past its
// total timeout + 2 s, calls the store cannot admit answer
// store_unavailable (HTTP 503), new writes succeed within 5 s of the end,
// and the whole history holds (no effect twice, none lost, every answer
// with an effect has its row, what stayed unknown settled by reconcile).
func TestPostgresBlackhole(t *testing.T) {
	dbURL := postgrestest.URL(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	storeURL, _ := pgSchemaURL(t, proxy.Addr())
	res := pgFaultRun(t, storeURL, &faultcheck.Fault{
		Name: "postgres blackhole then reset", Gap: 500 * time.Millisecond, Hold: 5 * time.Second,
		Apply: proxy.Blackhole,
		Heal: func() error {
			if err := proxy.Reset(); err != nil {
				return err
			}
			return proxy.Heal()
		},
	})
	if res.Codes[types.CodeStoreUnavailable] == 0 {
		t.Errorf("no call answered store_unavailable during a 5 s blackhole of the store: %v", res.Codes)
	}
}

// TestPostgresRestart: PostgreSQL restarted (pg_ctl restart -m fast) under
// 20 callers, on a server of the test's own (the shared test server must
// not restart under other tests). The same promises as
// TestPostgresBlackhole.
func TestPostgresRestart(t *testing.T) {
	pg := startPrivatePostgres(t)
	pgFaultRun(t, pg.url, &faultcheck.Fault{
		Name: "postgres restart", Gap: 500 * time.Millisecond, Hold: 0,
		Apply: pg.restart, Heal: func() error { return nil },
	})
}

// privatePostgres is a PostgreSQL server of one test.
type privatePostgres struct {
	url     string
	pgCtl   string
	data    string
	asUser  []string // runuser -u postgres -- when run as root
	logFile string
}

// startPrivatePostgres starts a PostgreSQL server of the test's own in a
// temporary directory (initdb, pg_ctl start) and stops it at the end.
// It is skipped (failed under CI=true) when no PostgreSQL binaries are
// installed.
func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	postgrestest.URL(t) // skipped like the other PostgreSQL tests
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Strings(bins)
	if len(bins) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no PostgreSQL binaries under /usr/lib/postgresql/*/bin")
		}
		t.Skip("no PostgreSQL binaries under /usr/lib/postgresql/*/bin")
	}
	bindir := filepath.Dir(bins[len(bins)-1])
	dir, err := os.MkdirTemp("", "toolgate-pgfault-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pg := &privatePostgres{pgCtl: filepath.Join(bindir, "pg_ctl"), data: filepath.Join(dir, "data"), logFile: filepath.Join(dir, "server.log")}
	if os.Geteuid() == 0 {
		// initdb refuses root: run the server as the postgres user.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root and there is no postgres user to run PostgreSQL as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		pg.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	pg.run(t, filepath.Join(bindir, "initdb"), "-D", pg.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pg.run(t, pg.pgCtl, "-D", pg.data, "-l", pg.logFile, "-w", "-t", "60",
		"-o", "-c listen_addresses=127.0.0.1 -p "+strconv.Itoa(port)+" -k "+dir+" -c fsync=off -c max_connections=200", "start")
	t.Cleanup(func() {
		c := pg.cmd(pg.pgCtl, "-D", pg.data, "-m", "immediate", "-w", "stop")
		_ = exec.Command(c[0], c[1:]...).Run()
	})
	pg.url = "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable"
	return pg
}

// cmd is the command line of name args, as the server's user.
func (pg *privatePostgres) cmd(name string, args ...string) []string {
	return append(append(append([]string{}, pg.asUser...), name), args...)
}

// run runs name args as the server's user, failing t on error.
func (pg *privatePostgres) run(t *testing.T, name string, args ...string) {
	t.Helper()
	c := pg.cmd(name, args...)
	if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(pg.logFile)
		t.Fatalf("%v: %v\n%s\n%s", c, err, out, log)
	}
}

// restart is pg_ctl restart -m fast: every session ends, the server is
// down for a moment, then back.
func (pg *privatePostgres) restart() error {
	c := pg.cmd(pg.pgCtl, "-D", pg.data, "-l", pg.logFile, "-m", "fast", "-w", "-t", "60", "restart")
	return exec.Command(c[0], c[1:]...).Run()
}
