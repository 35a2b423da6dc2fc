package toolgate_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
)

// echoConfig is one read tool that answers its arguments.
func echoConfig() *config.Config {
	return &config.Config{Tools: map[string]*config.Tool{
		"echo": {
			Description: "Answer the arguments.",
			Effect:      "read",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				return json.RawMessage(args), nil
			},
		},
	}}
}

func openEdgeGateway(t *testing.T, clk toolgate.Clock) *toolgate.Gateway {
	t.Helper()
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: echoConfig(), Clock: clk, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

// TestOptionsClockFromOutside injects a clock built outside toolgate: the
// gateway's Now, the run's timestamps and the execution row follow it.
func TestOptionsClockFromOutside(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clk := &stillClock{now: at}
	gw := openEdgeGateway(t, clk)
	if got := gw.Now(); !got.Equal(at) {
		t.Fatalf("gw.Now() = %v, want the injected clock's %v", got, at)
	}
	ctx := context.Background()
	run, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !run.CreatedAt.Equal(at) {
		t.Fatalf("run created at %v, want %v", run.CreatedAt, at)
	}
	clk.Advance(time.Hour)
	if res, err := gw.Call(ctx, run.ID, "echo", map[string]any{"n": 1}); err != nil || !res.OK {
		t.Fatalf("call: %v %+v", err, res)
	}
	rows, err := gw.History(ctx, run.ID)
	if err != nil || len(rows) != 1 {
		t.Fatalf("history: %v, %d rows", err, len(rows))
	}
	if !rows[0].StartedAt.Equal(at.Add(time.Hour)) {
		t.Fatalf("execution started at %v, want the moved clock's %v", rows[0].StartedAt, at.Add(time.Hour))
	}
}

// TestDoRun runs a call with the run the caller has read, with none, and
// with another run's copy: each is recorded in the call's own run.
func TestDoRun(t *testing.T) {
	ctx := context.Background()
	gw := openEdgeGateway(t, nil)
	other, err := gw.StartRun(ctx, toolgate.RunOptions{ID: "other", Principal: toolgate.Principal{ID: "cust_2"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		read func(id string) *toolgate.Run // the run passed to DoRun
	}{
		{"the run just read", func(id string) *toolgate.Run {
			r, err := gw.GetRun(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}},
		{"no run", func(string) *toolgate.Run { return nil }},
		{"another run's copy", func(string) *toolgate.Run { return other }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := gw.StartRun(ctx, toolgate.RunOptions{Principal: toolgate.Principal{ID: "cust_1"}})
			if err != nil {
				t.Fatal(err)
			}
			c := &toolgate.Call{RunID: run.ID, Tool: "echo", Args: json.RawMessage(`{"n":2}`)}
			res, err := gw.DoRun(ctx, c, tc.read(run.ID))
			if err != nil || !res.OK || string(res.Data) != `{"n":2}` {
				t.Fatalf("DoRun: %v %+v", err, res)
			}
			if rows, err := gw.History(ctx, run.ID); err != nil || len(rows) != 1 {
				t.Fatalf("history of %s: %v, %d rows; want 1", run.ID, err, len(rows))
			}
		})
	}
	if rows, err := gw.History(ctx, other.ID); err != nil || len(rows) != 0 {
		t.Fatalf("the other run got %d rows (%v); want none", len(rows), err)
	}
	_, err = gw.DoRun(ctx, &toolgate.Call{RunID: "missing", Tool: "echo", Args: json.RawMessage(`{}`)}, nil)
	if !errors.Is(err, toolgate.ErrUnknownRun) {
		t.Fatalf("DoRun of a missing run: %v, want ErrUnknownRun", err)
	}
}

// TestReconcileWithNothingUnknown: a gateway whose ledger holds no unknown
// outcome settles nothing and says so without error.
func TestReconcileWithNothingUnknown(t *testing.T) {
	gw := openEdgeGateway(t, nil)
	settled, err := gw.Reconcile(context.Background(), 10)
	if err != nil || len(settled) != 0 {
		t.Fatalf("Reconcile: %v, %d settled; want none", err, len(settled))
	}
}
