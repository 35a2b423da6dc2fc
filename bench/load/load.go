// Package load is toolgate's load comparison: the same tool call, driven
// on 127.0.0.1 at fixed concurrencies for a fixed time, through
//
//	(a) the dependency directly,
//	(b) a baseline reverse proxy (net/http/httputil.ReverseProxy with a tuned transport),
//	(c) toolgate with a read tool,
//	(d) toolgate with a write tool (operation ledger, durable SQLite records),
//	(e) optionally, the same write tool on a PostgreSQL store,
//
// in alternating rounds (each round takes the paths in a rotated order),
// so that a machine that gets busier or quieter during the run does not
// favour one path. toolgate is the real `toolgate serve` binary, the
// baseline a process of its own, and the dependency and the load
// generator share the bench process. Beside throughput and latency it
// measures CPU per call: the utime + stime of each server process over a
// segment (see ProcessCPU and TreeCPU), divided by the segment's
// successful calls.
package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/bench/serveproc"
)

// Path names one way to the dependency.
type Path string

// The four paths.
const (
	Direct Path = "direct"         // (a)
	Proxy  Path = "proxy"          // (b)
	Read   Path = "toolgate_read"  // (c)
	Write  Path = "toolgate_write" // (d)
	// PGWrite is (d) on a PostgreSQL store; only with Options.Postgres.
	PGWrite Path = "toolgate_write_postgres" // (e)
)

// Label is the path's name in tables: "(c) toolgate read".
func (p Path) Label() string {
	switch p {
	case Direct:
		return "(a) direct"
	case Proxy:
		return "(b) baseline proxy"
	case Read:
		return "(c) toolgate read"
	case Write:
		return "(d) toolgate write"
	case PGWrite:
		return "(e) toolgate write, PostgreSQL"
	}
	return string(p)
}

// roundOrder is the first round's order; round r rotates it by r.
var roundOrder = []Path{Proxy, Read, Write, Direct}

// Options shape one load comparison. Zero values are the documented
// defaults.
type Options struct {
	// Binary is the toolgate binary (serveproc.Build). Required.
	Binary string
	// Dir holds toolgate's config and SQLite file. Required.
	Dir string
	// Concurrency lists the numbers of concurrent callers. Default 1, 32.
	Concurrency []int
	// Rounds is the number of rounds. Default 3.
	Rounds int
	// Duration is each segment's length (one path at one concurrency in
	// one round). Default 3s.
	Duration time.Duration
	// Warmup is how long each path runs, unmeasured, before the first
	// round. Default 1s.
	Warmup time.Duration
	// ProxyCommand runs the baseline proxy as its own process: argv to
	// which "--target URL" is appended; it must print ProxyReady and its
	// URL on stderr (see ServeProxy). Default: the proxy runs in this
	// process.
	ProxyCommand []string
	// ServeArgs are extra flags for `toolgate serve`. Default
	// "--log-level warn".
	ServeArgs []string
	// Around, when set, is called before each measured segment with the
	// toolgate server's pid; the func it returns is called after it (a
	// profiler's start and stop).
	Around func(pid int, p Path, concurrency, round int) func()
	// Progress, when set, counts the segments.
	Progress Progress
	// Postgres, when set, adds path (e): a second `toolgate serve` with
	// the write tool on a fresh schema of this PostgreSQL database
	// (postgres://...), dropped at the end. When the cluster runs on
	// this machine its CPU (the postmaster and all its children) counts
	// in (e)'s CPU per call, so give it a cluster of its own
	// (scripts/with-postgres.sh starts one).
	Postgres string
}

// paths are the paths of a run, in the first round's order.
func (o *Options) paths() []Path {
	if o.Postgres == "" {
		return roundOrder
	}
	return append(append([]Path(nil), roundOrder...), PGWrite)
}

// Progress follows a load comparison.
type Progress interface {
	// Phase starts a phase of total steps.
	Phase(name string, total int)
	// Add counts n steps done.
	Add(n int)
}

type noProgress struct{}

func (noProgress) Phase(string, int) {}
func (noProgress) Add(int)           {}

func (o *Options) defaults() error {
	if o.Binary == "" || o.Dir == "" {
		return errors.New("load: Options needs Binary and Dir")
	}
	if len(o.Concurrency) == 0 {
		o.Concurrency = []int{1, 32}
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.Duration <= 0 {
		o.Duration = 3 * time.Second
	}
	if o.Warmup <= 0 {
		o.Warmup = time.Second
	}
	if o.ServeArgs == nil {
		o.ServeArgs = []string{"--log-level", "warn"}
	}
	if o.Progress == nil {
		o.Progress = noProgress{}
	}
	return nil
}

// configYAML is the toolgate.yaml of the comparison; STORE is the store's
// URL, DEP the dependency's.
const configYAML = `# The load comparison's toolgate.yaml (written by bench/load).
store: "STORE"
dependencies:
  orders: {base_url: "DEP"}
tools:
  get_order:
    description: Look up one order.
    dependency: orders
    request: {method: GET, path: "/orders/{order_id}"}
    effect: read
    input_schema: {type: object, required: [order_id], properties: {order_id: {type: string}}, additionalProperties: false}
    timeout: {connect: 1s, read: 5s}
  record_note:
    description: Record a note on an order.
    dependency: orders
    request: {method: POST, path: /records}
    effect: write
    input_schema:
      type: object
      required: [order_id, n]
      properties: {order_id: {type: string}, n: {type: integer}}
      additionalProperties: false
    timeout: {connect: 1s, read: 5s}
`

// Config is the toolgate.yaml of the load comparison on the store of
// storeURL and the dependency of depURL: a read tool (get_order) and a
// write tool (record_note) on the fake Dependency.
func Config(storeURL, depURL string) []byte {
	return []byte(strings.NewReplacer("STORE", storeURL, "DEP", depURL).Replace(configYAML))
}

// Run runs the comparison and returns its figures.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	maxConc := 0
	for _, c := range o.Concurrency {
		maxConc = max(maxConc, c)
	}

	// The dependency, in this process.
	depURL, stopDep, err := startDependency()
	if err != nil {
		return nil, err
	}
	defer stopDep()

	// The baseline proxy.
	proxyURL, proxyPid, stopProxy, err := startProxy(ctx, &o, depURL)
	if err != nil {
		return nil, err
	}
	defer stopProxy()

	// toolgate.
	srv, err := startToolgate(ctx, &o, depURL)
	if err != nil {
		return nil, err
	}
	defer srv.Stop(time.Minute)

	cl := &http.Client{Transport: &http.Transport{
		MaxIdleConns: 4 * maxConc, MaxIdleConnsPerHost: 2 * maxConc, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true,
	}, Timeout: time.Minute}
	targets, err := newTargets(ctx, cl, srv.URL, depURL, proxyURL, maxConc)
	if err != nil {
		return nil, err
	}
	m, pids := meterPaths(srv.Pid(), proxyPid)
	if o.Postgres != "" {
		stop, err := addPostgresPath(ctx, &o, cl, depURL, maxConc, targets, m, pids)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	var seq atomic.Int64
	if err := warmUp(ctx, &o, cl, targets, maxConc, &seq); err != nil {
		return nil, err
	}
	rep, err := runRounds(ctx, &o, cl, targets, pids, m, &seq)
	if err != nil {
		return nil, err
	}
	if err := srv.Stop(time.Minute); err != nil {
		return nil, fmt.Errorf("load: %w\n%s", err, srv.Stderr())
	}
	rep.finish()
	return rep, nil
}

// startDependency serves the fake dependency on 127.0.0.1 in this process
// and returns its URL and how to stop it.
func startDependency() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: &Dependency{}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// startToolgate writes toolgate's config, a SQLite store in front of the
// dependency at depURL, into o.Dir and starts the server on it.
func startToolgate(ctx context.Context, o *Options, depURL string) (*serveproc.Process, error) {
	cfg := filepath.Join(o.Dir, "toolgate.yaml")
	if err := os.WriteFile(cfg, Config("sqlite:toolgate.db", depURL), 0o600); err != nil {
		return nil, err
	}
	return serveproc.Start(ctx, serveproc.Options{Binary: o.Binary, Config: cfg, Args: o.ServeArgs})
}

// meterPaths are the CPU meters of the paths that have a server (toolgate,
// pid serverPid, for the read and write paths; the baseline proxy,
// proxyPid, when there is one) and, by path, the toolgate pid that
// Options.Around is given.
func meterPaths(serverPid, proxyPid int) (map[Path]meters, map[Path]int) {
	m := map[Path]meters{Read: {server: processMeter(serverPid)}, Write: {server: processMeter(serverPid)}}
	if proxyPid != 0 {
		m[Proxy] = meters{server: processMeter(proxyPid)}
	}
	pids := map[Path]int{Direct: serverPid, Proxy: serverPid, Read: serverPid, Write: serverPid}
	return m, pids
}

// writeBody is the write tool's call: a new operation each call (distinct
// arguments).
func writeBody(_ int, n int64) string {
	return fmt.Sprintf(`{"tool":"record_note","args":{"order_id":"ORD-4471","n":%d}}`, n)
}

// newTargets are paths (a) to (d): the dependency, the proxy and the
// toolgate server at base, with maxConc runs made for each toolgate path.
func newTargets(ctx context.Context, cl *http.Client, base, depURL, proxyURL string, maxConc int) (map[Path]*target, error) {
	readRuns, err := createRuns(ctx, cl, base, "read", maxConc)
	if err != nil {
		return nil, err
	}
	writeRuns, err := createRuns(ctx, cl, base, "write", maxConc)
	if err != nil {
		return nil, err
	}
	return map[Path]*target{
		Direct: getTarget(Direct, depURL+"/orders/ORD-4471"),
		Proxy:  getTarget(Proxy, proxyURL+"/orders/ORD-4471"),
		Read: callTarget(Read, base, readRuns, func(w int, n int64) string {
			return `{"tool":"get_order","args":{"order_id":"ORD-4471"}}`
		}),
		Write: callTarget(Write, base, writeRuns, writeBody),
	}, nil
}

// processMeter reads process pid's CPU time.
func processMeter(pid int) cpuMeter {
	return func() (time.Duration, error) { return ProcessCPU(pid) }
}

// warmUp sends each path one call, checked in full, then drives each at
// maxConc for o.Warmup; a path that fails is an error.
func warmUp(ctx context.Context, o *Options, cl *http.Client, targets map[Path]*target, maxConc int, seq *atomic.Int64) error {
	for _, p := range o.paths() {
		if err := checkOnce(ctx, cl, targets[p], seq); err != nil {
			return err
		}
	}
	o.Progress.Phase("load: warm-up", len(o.paths()))
	for _, p := range o.paths() {
		if seg := drive(ctx, cl, targets[p], maxConc, o.Warmup, seq); seg.errors > 0 {
			return fmt.Errorf("load: warm-up of %s: %d errors, the first: %s", p.Label(), seg.errors, seg.firstErr)
		}
		o.Progress.Add(1)
	}
	return nil
}

// runRounds drives every path at every concurrency for o.Duration, o.Rounds
// times, each round in its own order, calling o.Around (with the path's
// toolgate server's pid) around each segment and reading the path's CPU
// meters before and after it, and reports them.
func runRounds(ctx context.Context, o *Options, cl *http.Client, targets map[Path]*target, pids map[Path]int, m map[Path]meters, seq *atomic.Int64) (*Report, error) {
	segments := o.Rounds * len(o.Concurrency) * len(o.paths())
	rep := newReport(o)
	o.Progress.Phase("load: rounds", segments)
	for round := range o.Rounds {
		order := rotate(o.paths(), round)
		rep.Order = append(rep.Order, order)
		for _, conc := range o.Concurrency {
			for _, p := range order {
				var after func()
				if o.Around != nil {
					after = o.Around(pids[p], p, conc, round)
				}
				before := m[p].read()
				seg := drive(ctx, cl, targets[p], conc, o.Duration, seq)
				seg.cpu = m[p].read().since(before)
				if after != nil {
					after()
				}
				rep.add(p, conc, round, seg)
				o.Progress.Add(1)
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
		}
	}
	return rep, nil
}

func rotate(ps []Path, by int) []Path {
	by %= len(ps)
	return append(append([]Path(nil), ps[by:]...), ps[:by]...)
}

// startProxy starts the baseline, as its own process when
// o.ProxyCommand is set; its pid is 0 when it runs in this process (its
// CPU is then not measured).
func startProxy(ctx context.Context, o *Options, dep string) (string, int, func(), error) {
	if len(o.ProxyCommand) == 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", 0, nil, err
		}
		u, err := url.Parse(dep)
		if err != nil {
			return "", 0, nil, err
		}
		srv := &http.Server{Handler: NewProxy(u), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		return "http://" + ln.Addr().String(), 0, func() { srv.Close() }, nil
	}
	argv := append(append([]string(nil), o.ProxyCommand...), "--target", dep)
	p, err := serveproc.StartCommand(ctx, argv, ProxyReady, 0, 0)
	if err != nil {
		return "", 0, nil, err
	}
	return p.URL, p.Pid(), func() { _ = p.Stop(10 * time.Second) }, nil
}

// getTarget is a GET of url: (a) and (b).
func getTarget(p Path, url string) *target {
	return &target{path: p,
		request: func(ctx context.Context, _ int, _ int64) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		},
		good: func(status int, body []byte) bool {
			return status == http.StatusOK && bytes.HasPrefix(body, []byte(`{"order_id":"ORD-4471"`))
		},
	}
}

// callTarget is a toolgate call, each worker on its own run: (c) and (d).
func callTarget(p Path, base string, runs []string, body func(w int, n int64) string) *target {
	urls := make([]string, len(runs))
	for i, r := range runs {
		urls[i] = base + "/v1/runs/" + r + "/calls"
	}
	return &target{path: p,
		request: func(ctx context.Context, w int, n int64) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, urls[w], strings.NewReader(body(w, n)))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
			}
			return req, err
		},
		// The envelope encodes "ok" first.
		good: func(status int, body []byte) bool {
			return status == http.StatusOK && bytes.HasPrefix(body, []byte(`{"ok":true,`))
		},
	}
}

// checkOnce sends one request of t and checks its answer in full.
func checkOnce(ctx context.Context, cl *http.Client, t *target, seq *atomic.Int64) error {
	req, err := t.request(ctx, 0, seq.Add(1))
	if err != nil {
		return err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return fmt.Errorf("load: %s: %w", t.path.Label(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || !t.good(resp.StatusCode, body) {
		return fmt.Errorf("load: %s does not answer as expected: HTTP %d: %s %v", t.path.Label(), resp.StatusCode, clip(string(body)), err)
	}
	return nil
}

func createRuns(ctx context.Context, cl *http.Client, base, prefix string, n int) ([]string, error) {
	runs := make([]string, n)
	for i := range runs {
		runs[i] = fmt.Sprintf("load-%s-%d-%d", prefix, time.Now().UnixNano(), i)
		body := fmt.Sprintf(`{"run_id":%q,"principal":{"id":"load"}}`, runs[i])
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/runs", strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := cl.Do(req)
		if err != nil {
			return nil, err
		}
		var doc struct {
			RunID string `json:"run_id"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusCreated || doc.RunID != runs[i] {
			return nil, fmt.Errorf("load: create run %s: HTTP %d, %v", runs[i], resp.StatusCode, err)
		}
	}
	return runs, nil
}
