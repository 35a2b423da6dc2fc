package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// BenchmarkMCPToolsList is tools/list (every page) over a catalogue of
// 2,000 generated tools, for a key that sees 20 of them and for one that
// sees all, over an in-memory transport.
func BenchmarkMCPToolsList(b *testing.B) {
	fn := func(ctx context.Context, args json.RawMessage) (any, error) { return nil, nil }
	tools := map[string]*config.Tool{}
	for i := range 2000 {
		tools[fmt.Sprintf("tool_%04d", i)] = &config.Tool{Description: fmt.Sprintf("Generated tool %d.", i), Effect: types.EffectRead, Func: fn,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}
	}
	cfg := &config.Config{Tools: tools, Auth: config.Auth{Keys: []config.Key{
		{Name: "narrow", Key: "narrow-key-0123456789", Tools: []string{"tool_000?", "tool_001?"}},
		{Name: "wide", Key: "wide-key-012345678901"},
	}}}
	gw, err := toolgate.Open(b.Context(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer gw.Close()
	for _, k := range []struct{ name, key string }{{"key-20-of-2000", "narrow"}, {"unfiltered-2000", "wide"}} {
		b.Run(k.name, func(b *testing.B) {
			s := newServer(gw, Options{Key: k.key})
			serverEnd, clientEnd := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(b.Context())
			served := make(chan error, 1)
			go func() { served <- s.serve(ctx, serverEnd) }()
			defer func() {
				cancel()
				<-served
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, err := range cs.Tools(ctx, nil) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if want := map[string]int{"narrow": 20, "wide": 2000}[k.key]; n != want {
					b.Fatalf("listed %d tools, want %d", n, want)
				}
			}
		})
	}
}
