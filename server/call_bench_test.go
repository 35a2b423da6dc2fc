package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// BenchmarkPostCall is POST /v1/runs/{run}/calls of a read (a Go function
// on the memory store), through the server's whole handler: the server's
// own share of a call is what changes with server/.
func BenchmarkPostCall(b *testing.B) {
	cfg := &config.Config{Store: "memory", Auth: config.Auth{Keys: []config.Key{{Name: "alpha", Key: alphaKey}}},
		Tools: map[string]*config.Tool{"get_order": {Description: "Looks an order up.", Effect: types.EffectRead,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}},
			Func: func(ctx context.Context, args json.RawMessage) (any, error) {
				return json.RawMessage(`{"id":"ORD-4471","status":"delivered"}`), nil
			}}}}
	gw, err := toolgate.Open(b.Context(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gw.Close() })
	srv, err := New(Options{Gateway: gw, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	post := func(path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+alphaKey)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := post("/v1/runs", `{"run_id":"r1","principal":{"id":"p"}}`); rec.Code != http.StatusCreated {
		b.Fatalf("create run: %d %s", rec.Code, rec.Body)
	}
	const body = `{"tool":"get_order","args":{"order_id":"ORD-4471"}}`
	if rec := post("/v1/runs/r1/calls", body); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"ok":true`) {
		b.Fatalf("call: %d %s", rec.Code, rec.Body)
	}
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		post("/v1/runs/r1/calls", body)
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if rec := post("/v1/runs/r1/calls", body); !strings.Contains(rec.Body.String(), `"ok":true`) {
		b.Fatalf("the last call: %d %s", rec.Code, rec.Body)
	}
}

// cpuTime is the CPU time (user and system) this process used so far: on
// a busy machine it varies less than the wall time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
