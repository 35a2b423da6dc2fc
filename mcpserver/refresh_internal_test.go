package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// swapView is a view whose gateway the test replaces, as a reload
// replaces the gateway's configuration.
type swapView struct {
	cur atomic.Pointer[toolgate.Gateway]
}

func (v *swapView) Config() *config.Config                 { return v.cur.Load().Config() }
func (v *swapView) Catalogue(key string) *config.Catalogue { return v.cur.Load().Catalogue(key) }

// listGateway opens a gateway with the tools a, b and c, alpha seeing
// alphaTools and beta seeing b.
func listGateway(t *testing.T, alphaTools ...string) *toolgate.Gateway {
	t.Helper()
	fn := func(ctx context.Context, args json.RawMessage) (any, error) { return map[string]any{}, nil }
	tools := map[string]*config.Tool{}
	for _, n := range []string{"a", "b", "c"} {
		tools[n] = &config.Tool{Description: "Tool " + n + ".", Effect: types.EffectRead, Func: fn}
	}
	cfg := &config.Config{Tools: tools, Auth: config.Auth{Keys: []config.Key{
		{Name: "alpha", Key: "alpha-key-0123456789", Tools: alphaTools},
		{Name: "beta", Key: "beta-key-01234567890", Tools: []string{"b"}},
	}}}
	gw, err := toolgate.Open(t.Context(), toolgate.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

type keyTransport struct {
	key  string
	base http.RoundTripper
}

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return k.base.RoundTrip(r)
}

// listener connects a client that counts notifications/tools/list_changed.
func listener(t *testing.T, tr mcp.Transport) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changed
}

func listNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestRefreshNotifiesTheSessionsWhoseListChanged: after the configuration
// changes what alpha sees, alpha's HTTP and stdio sessions are sent
// notifications/tools/list_changed and list the new set; beta's list,
// which did not change, stays as it was and is not notified.
func TestRefreshNotifiesTheSessionsWhoseListChanged(t *testing.T) {
	before, after := listGateway(t, "a"), listGateway(t, "a", "c")
	v := &swapView{}
	v.cur.Store(before)

	h := Handler(before, Options{})
	h.s.view = v
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	httpSession := func(key string) (*mcp.ClientSession, chan struct{}) {
		return listener(t, &mcp.StreamableClientTransport{Endpoint: srv.URL,
			HTTPClient: &http.Client{Transport: keyTransport{key: key, base: base}}})
	}
	alphaHTTP, alphaHTTPChanged := httpSession("alpha-key-0123456789")
	betaHTTP, betaHTTPChanged := httpSession("beta-key-01234567890")

	toolsChanged := make(chan struct{})
	stdio := newServer(before, Options{Key: "alpha", ToolsChanged: toolsChanged})
	stdio.view = v
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- stdio.serve(ctx, serverEnd) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	alphaStdio, alphaStdioChanged := listener(t, clientEnd)

	for name, cs := range map[string]*mcp.ClientSession{"http": alphaHTTP, "stdio": alphaStdio} {
		if got := listNames(t, cs); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("alpha over %s lists %v before the change, want [a]", name, got)
		}
	}

	v.cur.Store(after)
	h.Refresh()
	toolsChanged <- struct{}{}

	<-alphaHTTPChanged
	<-alphaStdioChanged
	for name, cs := range map[string]*mcp.ClientSession{"http": alphaHTTP, "stdio": alphaStdio} {
		if got := listNames(t, cs); !slices.Equal(got, []string{"a", "c"}) {
			t.Errorf("alpha over %s lists %v after the change, want [a c]", name, got)
		}
	}
	if got := listNames(t, betaHTTP); !slices.Equal(got, []string{"b"}) {
		t.Errorf("beta lists %v, want [b]", got)
	}
	if n := len(betaHTTPChanged); n != 0 {
		t.Errorf("beta, whose list did not change, got %d list_changed", n)
	}

	// Without a Refresh: the next request on any session after the
	// configuration changed brings every list up to date.
	v.cur.Store(before)
	if got := listNames(t, betaHTTP); !slices.Equal(got, []string{"b"}) {
		t.Errorf("beta lists %v, want [b]", got)
	}
	<-alphaHTTPChanged
	if got := listNames(t, alphaHTTP); !slices.Equal(got, []string{"a"}) {
		t.Errorf("alpha lists %v after the change back, want [a]", got)
	}
}
