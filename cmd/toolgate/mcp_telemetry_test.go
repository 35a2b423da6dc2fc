package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/store/storeurl"
)

// `toolgate mcp` honours telemetry:: with traces: stdout its spans come
// out (on stderr: stdout is the protocol's), and its calls reach the stats
// buckets in the store, which `toolgate stats` reads.
func TestMCPStdioRecordsSpansAndStats(t *testing.T) {
	path := mcpConfig(t, "")
	db := filepath.Join(filepath.Dir(path), "tg.db")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "store: memory", "store: sqlite:"+db+"\ntelemetry: {traces: stdout}", 1)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		code := run(context.Background(), &env{stdin: inR, stdout: outW, stderr: &stderr, getenv: os.Getenv}, []string{"mcp", "--config", path})
		outW.Close()
		exit <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_order", Arguments: map[string]any{"order_id": "ORD-4471"}})
	if err != nil || res.IsError {
		t.Fatalf("get_order: %v %+v", err, res)
	}
	cs.Close()
	inW.Close()
	if code := <-exit; code != 0 {
		t.Fatalf("toolgate mcp exited %d: %s", code, stderr.String())
	}
	for _, want := range []string{`"Name":"execute_tool get_order"`, `"Name":"GET"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks the span %s:\n%s", want, stderr.String())
		}
	}

	// The stats buckets the session flushed (not the rows: ExactRows -1).
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storeurl.Open(t.Context(), cfg.Store, storeurl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	agg, err := stats.New(t.Context(), &stats.Config{Store: st, Tools: cfg, Replica: "reader", FlushInterval: -1, ExactRows: -1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close(context.Background())
	rep, err := agg.Query(t.Context(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if fig := rep.Tools["get_order"]; rep.Source != stats.SourceSketch || fig == nil || fig.Calls != 1 {
		t.Fatalf("stats from the buckets: source %s, get_order %+v; want 1 call", rep.Source, fig)
	}
}
