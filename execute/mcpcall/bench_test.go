package mcpcall_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/execute/mcpcall"
	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
)

// BenchmarkEcho compares a read through toolgate (validation, breaker, row,
// state commit on the memory store) with the same tools/call made directly
// with the SDK's client, over both transports.
func BenchmarkEcho(b *testing.B) {
	args := `{"text": "hi", "amount": 425000}`
	for _, tr := range transports {
		b.Run("toolgate/"+tr.name, func(b *testing.B) {
			bd := setup(b, tr)
			b.ResetTimer()
			for b.Loop() {
				res, err := bd.gw.Call(context.Background(), bd.run, "echo", json.RawMessage(args))
				if err != nil || !res.OK {
					b.Fatal(err, res.Observation)
				}
			}
		})
		b.Run("direct/"+tr.name, func(b *testing.B) {
			var t mcp.Transport
			if tr.name == "http" {
				fx := mcptest.New()
				srv := httptest.NewServer(fx.Handler())
				b.Cleanup(func() { fx.CloseSessions(); srv.Close() })
				t = &mcp.StreamableClientTransport{Endpoint: srv.URL}
			} else {
				t = &mcp.CommandTransport{Command: exec.Command(serverBinary)}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), t, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close() })
			b.ResetTimer()
			for b.Loop() {
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(args)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOwnSession prices the session of its own that a call gets when
// its MCP client sends a progressToken (or declares sampling, elicitation
// or roots): an initialize per call, and for stdio a process start, against
// the shared session of a plain call. docs/mcp-upstreams.md quotes it.
func BenchmarkOwnSession(b *testing.B) {
	args := json.RawMessage(`{"text": "hi", "amount": 425000}`)
	for _, tr := range transports {
		bd := setup(b, tr)
		own := mcpcall.WithCaller(context.Background(), &mcpcall.Caller{Session: caller(b), ProgressToken: "tok"})
		for _, c := range []struct {
			name string
			ctx  context.Context
		}{{"shared", context.Background()}, {"own", own}} {
			b.Run(tr.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					res, err := bd.gw.Call(c.ctx, bd.run, "echo", args)
					if err != nil || !res.OK {
						b.Fatal(err, res.Observation)
					}
				}
			})
		}
	}
}
