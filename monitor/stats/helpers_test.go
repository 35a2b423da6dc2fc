package stats

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/store/postgres"
	"github.com/toolgate/toolgate/store/postgres/postgrestest"
	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the start of a minute: the tests' bucket boundaries.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// storeKinds are the backends the store-backed tests run against
// (postgres when TOOLGATE_TEST_POSTGRES names a server, as under make test).
var storeKinds = []string{"memory", "sqlite", "postgres"}

// newStore opens an empty store of a kind, closed when the test ends.
func newStore(t testing.TB, kind string, clk clock.Clock) store.Store {
	t.Helper()
	var st store.Store
	switch kind {
	case "memory":
		st = memory.NewWithClock(clk.Now)
	case "sqlite":
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "toolgate.db"), sqlite.Options{Owner: "test", Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		st = s
	case "postgres":
		return postgrestest.Open(t, postgres.Options{Clock: clk})
	default:
		t.Fatalf("no store kind %q", kind)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// toolsYAML is the refunds fixture with the timeouts the tests compare
// with, and a second dependency's post_note.
var toolsYAML = refunds.Config("http://127.0.0.1:9", refunds.Delete("store"),
	refunds.Set("tools.issue_refund.timeout", "{read: 5s}"),
	refunds.Set("tools.issue_refund.verify", `{lookup: list_refunds, args: {order_id: "args.order_id"}, found: "size(result.refunds) > 0"}`),
	refunds.Set("tools.list_refunds.timeout", "{read: 2s}"),
	refunds.Set("tools.get_order.timeout", "{read: 2s}"),
	refunds.Add("dependencies", "notes_api: {base_url: http://127.0.0.1:9}"),
	refunds.Add("tools", `post_note:
  description: Post a note.
  dependency: notes_api
  request: {method: POST, path: /notes}
  timeout: {read: 1s}
`))

// testTools is the tools config of the tests: timeouts of 5s, 2s, 2s, 1s.
func testTools(t testing.TB) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(toolsYAML), "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newAgg makes an aggregator with a fake clock and no background flusher,
// closed when the test ends.
func newAgg(t testing.TB, st store.Store, clk clock.Clock, replica string, mutate ...func(*Config)) *Aggregator {
	t.Helper()
	cfg := &Config{Store: st, Tools: testTools(t), Replica: replica, Clock: clk, FlushInterval: -1,
		Logger: slog.New(slog.DiscardHandler)}
	for _, m := range mutate {
		m(cfg)
	}
	a, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	return a
}

// sketchOnly makes the aggregator always answer from the sketches.
func sketchOnly(c *Config) { c.ExactRows = -1 }

// row is a successful call of tool finishing at at after ms.
func row(tool string, at time.Time, ms float64) *types.Execution {
	return &types.Execution{
		RunID: "run-1", CallID: "call", Tool: tool, Dependency: dependencyOf(tool), ArgsHash: "h",
		Args: json.RawMessage(`{}`), Code: types.CodeOK, OK: true, SideEffect: types.SideEffectCommitted,
		Attempts: 1, LatencyMS: ms, StartedAt: at.Add(-time.Duration(ms * float64(time.Millisecond))), FinishedAt: at,
		Result: json.RawMessage(`{"ok":true}`),
	}
}

// failed is a failed call.
func failed(tool string, at time.Time, ms float64, code types.Code) *types.Execution {
	r := row(tool, at, ms)
	r.OK, r.Code, r.SideEffect = false, code, types.SideEffectNone
	return r
}

func dependencyOf(tool string) string {
	if tool == "post_note" {
		return "notes_api"
	}
	return "payments"
}

// commitRows writes rows to the store's execution log (run run-1).
func commitRows(t testing.TB, st store.Store, rows []*types.Execution) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.GetRun(ctx, "run-1"); err != nil {
		if err := st.CreateRun(ctx, &types.Run{ID: "run-1", State: json.RawMessage(`{}`), CreatedAt: t0, UpdatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range rows {
		c := *r
		c.Step = int64(i + 1)
		c.CallID = "call-" + strconv.Itoa(i)
		if err := st.Commit(ctx, &store.Commit{Execution: &c}); err != nil {
			t.Fatal(err)
		}
	}
}

// within reports whether got is within the sketch's relative accuracy of
// want (plus the microsecond rounding of the figures).
func within(got, want float64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= RelativeAccuracy*want+0.0006
}

// settableClock is a fake clock that can also be set.
type settableClock struct{ *clock.Fake }

func newClock() *settableClock { return &settableClock{clock.NewFake(t0)} }

// Set moves the clock to at (forward only).
func (c *settableClock) Set(at time.Time) { c.Advance(at.Sub(c.Now())) }

func mathExp(x float64) float64 { return math.Exp(x) }
