package pipeline_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/types"
)

// failingDependency is a real server on 127.0.0.1 that answers every request
// with 503 and counts the requests per path.
type failingDependency struct {
	mu     sync.Mutex
	byPath map[string]int
}

func (d *failingDependency) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.byPath[r.URL.Path]++
	d.mu.Unlock()
	w.WriteHeader(http.StatusServiceUnavailable)
}

func (d *failingDependency) requests(path string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byPath[path]
}

// readTool is a read tool on the dependency "flaky" at path, with
// maxAttempts attempts, instant backoffs and a deadline long enough that
// only the attempts and the budget stop it.
func readTool(path string, maxAttempts int) *config.Tool {
	return &config.Tool{
		Description: "Read " + path + ".",
		Dependency:  "flaky",
		Effect:      types.EffectRead,
		Request:     &config.Request{Method: "GET", Path: path},
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}},
			"additionalProperties": false},
		Timeout: config.Timeout{Connect: config.Duration(2 * time.Second), Read: config.Duration(30 * time.Second),
			Total: config.Duration(time.Hour)},
		Retry: config.Retry{MaxAttempts: maxAttempts, Base: config.Duration(time.Millisecond), Cap: config.Duration(time.Millisecond)},
	}
}

// openFlaky opens a gateway (memory store, fake clock) whose dependency
// "flaky" is h on 127.0.0.1, with the given tools, and starts a run.
func openFlaky(t *testing.T, h http.Handler, tools map[string]*config.Tool) (*toolgate.Gateway, *toolgate.Run) {
	t.Helper()
	srv := httptest.NewServer(h)
	cfg := &config.Config{
		Store: "memory",
		// A breaker that never opens, so that only the budget stops retries.
		Dependencies: map[string]*config.Dependency{"flaky": {BaseURL: srv.URL, Breaker: config.Breaker{Threshold: 1 << 20}}},
		Tools:        tools,
	}
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Clock: clk, Rand: clock.FixedRand(0.5), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		gw.Close()
		srv.CloseClientConnections()
		srv.Close()
	})
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: toolgate.Principal{ID: "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	return gw, run
}

// A caller alone on a dependency that keeps failing gets every configured
// attempt on every call: the budget bounds retries at a time, not retries
// in a window (regression: the second read stopped after 2 attempts).
func TestRetryBudgetLoneCallerGetsEveryAttempt(t *testing.T) {
	dep := &failingDependency{byPath: map[string]int{}}
	gw, run := openFlaky(t, dep, map[string]*config.Tool{
		"read_a": readTool("/a", 4),
		"read_b": readTool("/b", 3),
	})
	want := map[string]int{}
	for round := range 3 {
		for _, c := range []struct {
			tool, path string
			attempts   int
		}{{"read_a", "/a", 4}, {"read_b", "/b", 3}} {
			res, err := gw.Call(context.Background(), run.ID, c.tool, map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			want[c.path] += c.attempts
			if res.Code() != types.CodeUpstreamError {
				t.Fatalf("round %d %s: code %s, want upstream_error (%s)", round, c.tool, res.Code(), res.Observation)
			}
			if strings.Contains(res.Error.Message, "budget") {
				t.Errorf("round %d %s: a lone caller was refused by the budget: %s", round, c.tool, res.Error.Message)
			}
			if got := dep.requests(c.path); got != want[c.path] {
				t.Errorf("round %d %s: %d requests at the dependency, want %d (every attempt)", round, c.tool, got, want[c.path])
			}
		}
	}
	// The same caller's two reads in parallel (a model's parallel tool
	// calls): still every attempt for each.
	var wg sync.WaitGroup
	for _, tool := range []string{"read_a", "read_b"} {
		wg.Go(func() {
			res, err := gw.Call(context.Background(), run.ID, tool, map[string]any{})
			if err != nil || strings.Contains(res.Error.Message, "budget") {
				t.Errorf("%s in parallel: %v %+v", tool, err, res)
			}
		})
	}
	wg.Wait()
	if a, b := dep.requests("/a"), dep.requests("/b"); a != want["/a"]+4 || b != want["/b"]+3 {
		t.Errorf("in parallel: %d and %d requests in all, want %d and %d", a, b, want["/a"]+4, want["/b"]+3)
	}
}

// heldRetries is a dead dependency on 127.0.0.1: every answer is 503. The
// first attempt of each item waits until all the callers' first attempts
// have arrived (so every call is active at once), and, while hold is open,
// a retry (any later request for the same item) is held open and reported on
// held, so that the retries in flight at one time can be counted.
type heldRetries struct {
	callers  int
	arrived  chan struct{} // closed when every first attempt is in
	held     chan string   // a retry is being held
	release  chan struct{} // closed to answer the held retries
	mu       sync.Mutex
	seen     map[string]int
	first    int
	inFlight int // retries at the server now
	peak     int // most retries at the server at one time
	retries  int // retries received in all
}

func (d *heldRetries) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	item := strings.TrimPrefix(r.URL.Path, "/items/")
	d.mu.Lock()
	d.seen[item]++
	isRetry := d.seen[item] > 1
	if !isRetry {
		d.first++
		if d.first == d.callers {
			close(d.arrived)
		}
	} else {
		d.retries++
		d.inFlight++
		d.peak = max(d.peak, d.inFlight)
	}
	d.mu.Unlock()
	if !isRetry {
		<-d.arrived
	} else {
		select {
		case d.held <- item:
		case <-d.release:
		}
		<-d.release
		d.mu.Lock()
		d.inFlight--
		d.mu.Unlock()
	}
	w.WriteHeader(http.StatusServiceUnavailable)
}

// 200 callers at once on a dead dependency: the retries in flight at one
// time never exceed the budget's share of the active calls (0.2 x 200 = 40),
// counted at the dependency.
func TestRetryBudgetHoldsBackAStorm(t *testing.T) {
	const callers = 200
	dep := &heldRetries{callers: callers, arrived: make(chan struct{}), held: make(chan string),
		release: make(chan struct{}), seen: map[string]int{}}
	tool := readTool("/items/{id}", 4)
	tool.InputSchema["required"] = []any{"id"}
	gw, run := openFlaky(t, dep, map[string]*config.Tool{"read_item": tool})

	done := make(chan *types.Result, callers)
	for i := range callers {
		go func() {
			res, err := gw.Call(context.Background(), run.ID, "read_item", map[string]any{"id": "item-" + strconv.Itoa(i)})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
	}
	// The first wave: every caller either ended (its retry refused) or has
	// its first retry held at the dependency.
	ended, held := 0, 0
	var results []*types.Result
	for ended+held < callers {
		select {
		case res := <-done:
			ended++
			results = append(results, res)
		case <-dep.held:
			held++
		}
	}
	dep.mu.Lock()
	peak := dep.peak
	dep.mu.Unlock()
	if held > 40 || peak > 40 {
		t.Errorf("%d retries held at once (peak %d) for %d active calls, want at most 0.2 x %d = 40", held, peak, callers, callers)
	}
	if held < 3 {
		t.Errorf("%d retries in flight, want at least the minimum of 3", held)
	}
	for _, res := range results {
		if res == nil || !strings.Contains(res.Error.Message, "retry budget exhausted") {
			t.Fatalf("a caller ended in the first wave for another reason: %+v", res)
		}
	}
	// The rest: retries answered at once from now on.
	close(dep.release)
	for ended < callers {
		<-done
		ended++
	}
	dep.mu.Lock()
	defer dep.mu.Unlock()
	if dep.peak > 40 {
		t.Errorf("peak of %d retries at once, want at most 40", dep.peak)
	}
	// Unbudgeted, 200 callers with 4 attempts each would send 600 retries.
	if dep.retries >= callers {
		t.Errorf("%d retries sent in all by %d callers, want far fewer than one per caller", dep.retries, callers)
	}
	t.Logf("%d callers: %d retries in the first wave, %d in all, peak %d at once", callers, held, dep.retries, dep.peak)
}
