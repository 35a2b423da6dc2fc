package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/bench/load"
	"github.com/toolgate/toolgate/bench/serveproc"
)

// replicasRun is one replicas run in progress.
type replicasRun struct {
	callers  int
	duration time.Duration
	// think is each caller's pause between an answer and its next call.
	think time.Duration
	cl    *http.Client
	seq   atomic.Int64
	// answered is every successful answer, per run id, over all phases.
	answered map[string]int
}

func runReplicas(ctx context.Context, args []string) error {
	fs := flagSet("replicas", "[--postgres URL] [--replicas 3] [--callers 2] [--duration 5s] [--rounds 1]")
	pgURL := fs.String("postgres", os.Getenv("TOOLGATE_TEST_POSTGRES"), "the PostgreSQL database the replicas share (a fresh schema in it, dropped at the end); default $TOOLGATE_TEST_POSTGRES, which scripts/with-postgres.sh sets")
	replicas := fs.Int("replicas", 3, "replicas in phase 2")
	callers := fs.Int("callers", 2, "concurrent callers per replica, each on its own run")
	duration := fs.Duration("duration", 5*time.Second, "length of each phase in each round")
	think := fs.Duration("think", 5*time.Millisecond, "each caller's pause between an answer and its next call, so that a replica's load stays latency-bound (0: back to back)")
	rounds := fs.Int("rounds", 1, "rounds; each runs phase 1 then phase 2")
	toolgatePath := fs.String("toolgate", "", "the toolgate binary to run (default: go build ./cmd/toolgate)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *pgURL == "" {
		return fmt.Errorf("%w: --postgres URL (or TOOLGATE_TEST_POSTGRES) is required", errUsage)
	}
	if *replicas < 2 || *callers < 1 || *rounds < 1 || *duration <= 0 {
		return fmt.Errorf("%w: --replicas >= 2, --callers, --rounds and --duration > 0", errUsage)
	}
	bin, cleanup, err := toolgateBinary(ctx, *toolgatePath)
	if err != nil {
		return err
	}
	defer cleanup()
	r := &replicasRun{callers: *callers, duration: *duration, think: *think, answered: map[string]int{},
		cl: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * *callers, DisableCompression: true}, Timeout: time.Minute}}
	return r.run(ctx, bin, *pgURL, *replicas, *rounds)
}

// run makes the schema and the dependency, starts the replicas (the
// first alone, then the others), runs the rounds and checks the ledger.
func (r *replicasRun) run(ctx context.Context, bin, pgURL string, replicas, rounds int) error {
	schema := fmt.Sprintf("bench_replicas_%d", time.Now().UnixNano())
	conn, storeURL, err := newSchema(ctx, pgURL, schema)
	if err != nil {
		return err
	}
	defer func() {
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		conn.Close(context.Background())
	}()
	depURL, stopDep, err := startDependency()
	if err != nil {
		return err
	}
	defer stopDep()
	dir, err := os.MkdirTemp("", "toolgate-bench-replicas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(cfg, load.Config(storeURL, depURL), 0o600); err != nil {
		return err
	}
	procs, err := startReplicas(ctx, bin, cfg, replicas)
	if err != nil {
		return err
	}
	defer stopReplicas(procs)
	stats, busy, err := r.rounds(ctx, procs, rounds)
	if err != nil {
		return err
	}
	problems, err := r.verify(ctx, conn)
	if err != nil {
		return err
	}
	printReplicas(os.Stdout, summariseReplicas(stats), r.callers, problems)
	fmt.Printf("\nMachine CPU busy (all processes, /proc/stat): phase 1 %.0f%%, phase 2 %.0f%%; load average at end: %s\n",
		100*median(busy[1]), 100*median(busy[2]), readLoadAvg())
	if len(problems) > 0 {
		return errors.New("replicas: the ledger check failed")
	}
	return nil
}

// startReplicas starts n servers on the config file cfg, one at a time:
// the first migrates the schema. When one fails to start, those started
// are stopped.
func startReplicas(ctx context.Context, bin, cfg string, n int) ([]*serveproc.Process, error) {
	procs := make([]*serveproc.Process, 0, n)
	for range n {
		p, err := serveproc.Start(ctx, serveproc.Options{Binary: bin, Config: cfg, Args: []string{"--log-level", "warn"}})
		if err != nil {
			stopReplicas(procs)
			return nil, err
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// stopReplicas stops the servers, each given a minute.
func stopReplicas(procs []*serveproc.Process) {
	for _, p := range procs {
		_ = p.Stop(time.Minute)
	}
}

// rounds runs each round's two phases (phase 1 on the first replica
// alone, phase 2 on all of them) and returns what each replica's callers
// measured in each phase and, by phase, how busy the machine's CPU was in
// each round.
func (r *replicasRun) rounds(ctx context.Context, procs []*serveproc.Process, rounds int) ([]replicaStat, map[int][]float64, error) {
	var stats []replicaStat
	busy := map[int][]float64{}
	for round := range rounds {
		for _, phase := range []int{1, 2} {
			fmt.Fprintf(os.Stderr, "replicas: round %d, phase %d\n", round+1, phase)
			on := procs[:1]
			if phase == 2 {
				on = procs
			}
			before := readCPU()
			s, err := r.phase(ctx, on, phase, round)
			if err != nil {
				return nil, nil, err
			}
			busy[phase] = append(busy[phase], before.busyUntil(readCPU()))
			stats = append(stats, s...)
		}
	}
	return stats, busy, nil
}

// newSchema connects to pgURL, creates schema and returns the connection
// and the store URL that points the replicas at the schema.
func newSchema(ctx context.Context, pgURL, schema string) (*pgx.Conn, string, error) {
	u, err := url.Parse(pgURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, "", fmt.Errorf("%w: --postgres must be a postgres:// URL", errUsage)
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return nil, "", fmt.Errorf("replicas: connect: %w", err)
	}
	id := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+id+"; SET search_path TO "+id); err != nil {
		conn.Close(ctx)
		return nil, "", fmt.Errorf("replicas: create schema: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return conn, u.String(), nil
}

// startDependency serves the load comparison's fake dependency on
// 127.0.0.1 in this process.
func startDependency() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: &load.Dependency{}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// phase drives every replica in procs at once, r.callers callers each on a
// run of its own made for this phase, for r.duration.
func (r *replicasRun) phase(ctx context.Context, procs []*serveproc.Process, phase, round int) ([]replicaStat, error) {
	runs := make([][]string, len(procs))
	for i, p := range procs {
		for c := range r.callers {
			id := fmt.Sprintf("rep-%d-%d-%d-%d-%d", round, phase, i+1, c, time.Now().UnixNano())
			if err := r.createRun(ctx, p.URL, id); err != nil {
				return nil, err
			}
			runs[i] = append(runs[i], id)
		}
	}
	stats := make([]replicaStat, len(procs))
	lat := make([][][]time.Duration, len(procs))
	okRuns := make([][]int, len(procs))
	errs := make([][]int, len(procs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	var deadline time.Time
	for i, p := range procs {
		lat[i], okRuns[i], errs[i] = make([][]time.Duration, r.callers), make([]int, r.callers), make([]int, r.callers)
		for c := range r.callers {
			wg.Go(func() {
				<-start
				lat[i][c], errs[i][c] = r.caller(ctx, p.URL, runs[i][c], deadline)
				okRuns[i][c] = len(lat[i][c])
			})
		}
	}
	began := time.Now()
	deadline = began.Add(r.duration)
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	for i := range procs {
		s := replicaStat{Phase: phase, Round: round, Replica: i + 1, Elapsed: elapsed, Answered: map[string]int{}}
		for c := range r.callers {
			s.Latencies = append(s.Latencies, lat[i][c]...)
			s.OK += okRuns[i][c]
			s.Errors += errs[i][c]
			s.Answered[runs[i][c]] = okRuns[i][c]
			r.answered[runs[i][c]] = okRuns[i][c]
		}
		stats[i] = s
	}
	return stats, ctx.Err()
}

// caller makes write calls on run, a new operation each, one after the
// other until deadline; it returns the successes' latencies and the
// number of failures.
func (r *replicasRun) caller(ctx context.Context, base, run string, deadline time.Time) ([]time.Duration, int) {
	u := base + "/v1/runs/" + run + "/calls"
	var lat []time.Duration
	failed := 0
	var buf bytes.Buffer
	for time.Now().Before(deadline) && ctx.Err() == nil {
		body := fmt.Sprintf(`{"tool":"record_note","args":{"order_id":"ORD-4471","n":%d}}`, r.seq.Add(1))
		began := time.Now()
		resp, err := r.cl.Post(u, "application/json", strings.NewReader(body))
		if err != nil {
			failed++
			continue
		}
		buf.Reset()
		_, err = io.Copy(&buf, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.HasPrefix(buf.Bytes(), []byte(`{"ok":true,`)) {
			failed++
			continue
		}
		lat = append(lat, time.Since(began))
		if r.think > 0 {
			time.Sleep(r.think)
		}
	}
	return lat, failed
}

// createRun creates run id on the replica at base.
func (r *replicasRun) createRun(ctx context.Context, base, id string) error {
	body := fmt.Sprintf(`{"run_id":%q,"principal":{"id":"bench"}}`, id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/runs", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.cl.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("replicas: create run %s: HTTP %d: %s", id, resp.StatusCode, b)
	}
	return nil
}

// verify reads the schema's execution rows and checks them against the
// answered calls (checkLedger).
func (r *replicasRun) verify(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT run_id, count(*), count(*) FILTER (WHERE ok), count(DISTINCT operation_key)
		FROM executions GROUP BY run_id`)
	if err != nil {
		return nil, fmt.Errorf("replicas: read executions: %w", err)
	}
	got := map[string]ledgerRows{}
	for rows.Next() {
		var run string
		var l ledgerRows
		if err := rows.Scan(&run, &l.Rows, &l.OKRows, &l.Keys); err != nil {
			rows.Close()
			return nil, err
		}
		got[run] = l
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var dup int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT operation_key FROM executions
		GROUP BY operation_key HAVING count(*) > 1) d`).Scan(&dup); err != nil {
		return nil, fmt.Errorf("replicas: read executions: %w", err)
	}
	return checkLedger(r.answered, got, dup), nil
}

// readCPU reads the machine's CPU time counters from /proc/stat (zero
// where it cannot).
func readCPU() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPULine(line)
}
