package mcpcall_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
	"github.com/toolgate/toolgate/types"
)

// transport is one way of reaching the fixture.
type transport struct {
	name string
	// start serves a fixture and returns the mcp: value of the config and,
	// in process, the fixture (nil for stdio: ask its counts tool).
	start func(t testing.TB) (string, *mcptest.Fixture)
}

var transports = []transport{
	{"http", func(t testing.TB) (string, *mcptest.Fixture) {
		fx := mcptest.New()
		srv := httptest.NewServer(fx.Handler())
		t.Cleanup(func() { fx.CloseSessions(); srv.Close() })
		return "{url: " + strconv.Quote(srv.URL) + "}", fx
	}},
	{"stdio", func(t testing.TB) (string, *mcptest.Fixture) {
		return "{command: [" + strconv.Quote(serverBinary) + "]}", nil
	}},
}

// bundle is a gateway in front of the fixture, with a run.
type bundle struct {
	gw  *toolgate.Gateway
	run string
	fx  *mcptest.Fixture
}

// setup opens a gateway on testdata/fixture.yaml with the fixture reached
// by tr, edited by the replacements (old, new, ...).
func setup(t testing.TB, tr transport, replacements ...string) *bundle {
	t.Helper()
	return setupWith(t, tr, nil, replacements...)
}

// setupWith is setup with the gateway's options edited by opt.
func setupWith(t testing.TB, tr transport, opt func(*toolgate.Options), replacements ...string) *bundle {
	t.Helper()
	return open(t, tr, "testdata/fixture.yaml", opt, replacements...)
}

// setupFile is setup on another config file.
func setupFile(t testing.TB, tr transport, path string) *bundle {
	t.Helper()
	return open(t, tr, path, nil)
}

func open(t testing.TB, tr transport, path string, opt func(*toolgate.Options), replacements ...string) *bundle {
	t.Helper()
	server, fx := tr.start(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "SERVER", server, 1)
	for i := 0; i+1 < len(replacements); i += 2 {
		if !strings.Contains(text, replacements[i]) {
			t.Fatalf("config has no %q", replacements[i])
		}
		text = strings.Replace(text, replacements[i], replacements[i+1], 1)
	}
	cfg, err := config.Parse([]byte(text), path, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	opts := toolgate.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if opt != nil {
		opt(&opts)
	}
	gw, err := toolgate.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	run, err := gw.StartRun(context.Background(), toolgate.RunOptions{Principal: types.Principal{ID: "cust_42"}})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{gw: gw, run: run.ID, fx: fx}
}

// call runs one tool call in the bundle's run.
func (b *bundle) call(t testing.TB, tool string, args string) *types.Result {
	t.Helper()
	res, err := b.gw.Call(context.Background(), b.run, tool, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// counts is what the fixture has received: from the in-process fixture, or
// through its counts tool for a subprocess.
func (b *bundle) counts(t testing.TB) mcptest.Counts {
	t.Helper()
	if b.fx != nil {
		return b.fx.Counts()
	}
	res := b.call(t, "counts", `{}`)
	if !res.OK {
		t.Fatalf("counts: %s", res.Observation)
	}
	var c mcptest.Counts
	if err := json.Unmarshal(res.Data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}
