package mcpcall_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/execute/mcpcall"
	"github.com/toolgate/toolgate/types"
)

// caller is an MCP client's session with a server standing in for
// toolgate's own, for calls made as if over MCP (mcpcall.WithCaller).
func caller(t testing.TB) *mcp.ServerSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcp.NewServer(&mcp.Implementation{Name: "front", Version: "1"}, nil).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return ss
}

// TestCallSessionClosedOffThePath: a call with a progressToken runs on a
// stdio process of its own; the call answers without waiting for that
// process to exit (a server may outlive its stdin, as server-everything
// does, and closing then waits 5s before signalling it). The process here
// exits only once the test, after the answer, releases it: had the call
// waited, it would have been signalled instead, and never said "released".
func TestCallSessionClosedOffThePath(t *testing.T) {
	gw, log := hostileGateway(t, "linger", nil, "")
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: types.Principal{ID: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := mcpcall.WithCaller(context.Background(), &mcpcall.Caller{Session: caller(t), ProgressToken: "tok"})
	res, err := gw.Call(ctx, run.ID, "ok", json.RawMessage(`{}`))
	if err != nil || !res.OK {
		t.Fatalf("the call: %v %+v", err, res)
	}
	if err := os.WriteFile(log+".release", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	gw.Close() // waits for both processes: the shared one and the call's
	starts, released := logLines(t, log, "start"), logLines(t, log, "released")
	if starts != 2 || released != 2 {
		t.Errorf("%d processes started, %d exited when released, want 2 and 2: the call's was signalled", starts, released)
	}
}
