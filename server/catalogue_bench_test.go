package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// Keys of the catalogue benchmark.
const (
	narrowKey = "narrow-key-0123456789"
	wideKey   = "wide-key-012345678901"
)

// bigCatalogue is a gateway of n generated tools (each with a small
// schema and, for one in ten, a permission): the key narrow sees 20 of
// them (a glob), the key wide sees them all.
func bigCatalogue(b *testing.B, n int) *Server {
	b.Helper()
	fn := func(ctx context.Context, args json.RawMessage) (any, error) { return nil, nil }
	tools := make(map[string]*config.Tool, n)
	for i := range n {
		t := &config.Tool{
			Description: fmt.Sprintf("Generated tool number %d: looks something up.", i),
			Effect:      types.EffectRead,
			InputSchema: map[string]any{"type": "object", "required": []any{"id"}, "additionalProperties": false,
				"properties": map[string]any{
					"id":    map[string]any{"type": "string", "description": "The object's id."},
					"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
				}},
			Func: fn,
		}
		if i%10 == 9 {
			t.Permission = "admin:write"
		}
		tools[fmt.Sprintf("tool_%04d", i)] = t
	}
	cfg := &config.Config{Store: "memory", Tools: tools, Auth: config.Auth{Keys: []config.Key{
		{Name: "narrow", Key: narrowKey, Tools: []string{"tool_000?", "tool_001?"}},
		{Name: "wide", Key: wideKey},
	}}}
	gw, err := toolgate.Open(b.Context(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gw.Close() })
	if got := len(gw.Catalogue("narrow").Listed); got != 20 {
		b.Fatalf("the narrow key sees %d tools, want 20", got)
	}
	srv, err := New(Options{Gateway: gw, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

// BenchmarkToolsList is GET /v1/tools over a catalogue of 2,000 tools, for
// a key that sees 20 of them and for one that sees all, in each format.
func BenchmarkToolsList(b *testing.B) {
	srv := bigCatalogue(b, 2000)
	h := srv.Handler()
	for _, k := range []struct{ name, key string }{{"key-20-of-2000", narrowKey}, {"unfiltered-2000", wideKey}} {
		for _, format := range []string{"toolgate", "openai", "anthropic", "mcp"} {
			b.Run(k.name+"/"+format, func(b *testing.B) {
				path := "/v1/tools"
				if format != "toolgate" {
					path += "?format=" + format
				}
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.Header.Set("Authorization", "Bearer "+k.key)
				b.ReportAllocs()
				for b.Loop() {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("%d %s", w.Code, w.Body)
					}
				}
			})
		}
	}
}
