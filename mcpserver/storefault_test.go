package mcpserver_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/memory"
	"github.com/toolgate/toolgate/types"
)

// slowStore is a memory store whose run reads fail with
// store.ErrUnavailable while down is set, as a PostgreSQL that does not
// answer in time does.
type slowStore struct {
	store.Store
	down atomic.Bool
}

func (s *slowStore) GetRun(ctx context.Context, id string) (*types.Run, error) {
	if s.down.Load() {
		return nil, store.ErrUnavailable
	}
	return s.Store.GetRun(ctx, id)
}

// TestStoreUnavailableIsAToolResult: a tools/call whose run cannot be read
// because the store does not answer is answered as a tool result with the
// code store_unavailable (retryable, next: wait, nothing sent), like a call
// the pipeline cannot admit, not as a JSON-RPC internal error the model
// cannot act on; once the store answers again the same call succeeds.
func TestStoreUnavailableIsAToolResult(t *testing.T) {
	p, url := provider(t)
	cfg, err := config.Parse([]byte(configText(t, url)), "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	st := &slowStore{Store: memory.New()}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	_, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)

	st.down.Store(true)
	res, env := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, nil)
	if !res.IsError || env.Code() != types.CodeStoreUnavailable {
		t.Fatalf("code %q (isError %t), want store_unavailable", env.Code(), res.IsError)
	}
	if !env.Error.Retryable || env.Meta.Next != types.NextWait || env.Meta.SideEffect != types.SideEffectNone || env.Meta.RetryAfterMS <= 0 {
		t.Errorf("envelope %+v %+v: want retryable, next wait, side_effect none, retry_after_ms", env.Error, env.Meta)
	}
	if got := p.Counts().Reads; got != 0 {
		t.Errorf("the provider saw %d reads while the store was down, want 0", got)
	}

	st.down.Store(false)
	if _, env := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, nil); !env.OK {
		t.Fatalf("after the store came back: %s", env.Observation)
	}
}

// TestCloseSessionsEndsThem: CloseSessions closes the sessions a handler
// still holds (Close alone leaves them to their idle timeout), so that a
// shut-down server keeps none: the client's next call is refused as a
// call on an unknown session.
func TestCloseSessionsEndsThem(t *testing.T) {
	_, url := provider(t)
	gw := gateway(t, configText(t, url))
	h, endpoint := httpEndpoint(t, gw, mcpserver.Options{})
	cs := connectHTTP(t, endpoint, supportKey)
	if _, env := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, nil); !env.OK {
		t.Fatalf("get_order: %s", env.Observation)
	}
	h.CloseSessions()
	if _, err := call(t, cs, "get_order", map[string]any{"order_id": orderID}, nil); err == nil {
		t.Fatal("a call on a closed session succeeded")
	}
}
