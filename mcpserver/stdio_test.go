package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/mcpserver"
	"github.com/toolgate/toolgate/types"
)

// rawSession serves one in-process stdio session on pipes and lets the test
// write lines and read answers.
type rawSession struct {
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func serveRaw(t *testing.T, text string, opts mcpserver.Options) *rawSession {
	t.Helper()
	gw := gateway(t, text)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &rawSession{in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() {
		s.done <- mcpserver.Serve(context.Background(), gw, opts, mcpserver.StdioTransport(inR, outW))
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close() // the client hangs up: Serve returns
		if err := <-s.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

func (s *rawSession) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// answer reads the next message.
func (s *rawSession) answer(t *testing.T) (id json.RawMessage, result json.RawMessage, e *jsonrpc.Error) {
	t.Helper()
	if !s.out.Scan() {
		t.Fatalf("no answer: %v", s.out.Err())
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		t.Fatalf("answer %s: %v", s.out.Bytes(), err)
	}
	return m.ID, m.Result, m.Error
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestStdioMalformedLinesGetErrorsAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	_, url := provider(t)
	s := serveRaw(t, configText(t, url), mcpserver.Options{})
	s.send(t, initialize)
	if id, _, e := s.answer(t); string(id) != "1" || e != nil {
		t.Fatalf("initialize: id %s error %v", id, e)
	}
	cases := []struct {
		line string
		id   string
		code int64
	}{
		{`{"jsonrpc":"2.0","id":2,"method":`, "null", jsonrpc.CodeParseError},
		{`not json at all`, "null", jsonrpc.CodeParseError},
		{`{"jsonrpc":"1.0","id":3,"method":"tools/list"}`, "3", jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":4,"method":"no/such/method"}`, "4", jsonrpc.CodeMethodNotFound},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_order","arguments":[1]}}`, "5", jsonrpc.CodeInvalidParams},
	}
	for _, c := range cases {
		s.send(t, c.line)
		id, _, e := s.answer(t)
		if string(id) != c.id || e == nil || e.Code != c.code {
			t.Errorf("%s: answer id %s error %+v, want id %s code %d", c.line, id, e, c.id, c.code)
		}
	}
	// Still serving: a call works.
	s.send(t, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_order","arguments":{"order_id":"ORD-4471"}}}`)
	id, result, e := s.answer(t)
	if string(id) != "6" || e != nil {
		t.Fatalf("call after the bad lines: id %s error %+v", id, e)
	}
	var res struct {
		StructuredContent types.Result `json:"structuredContent"`
	}
	if err := json.Unmarshal(result, &res); err != nil || !res.StructuredContent.OK {
		t.Errorf("result %s, want ok", result)
	}
}

func TestStdioPicksTheKey(t *testing.T) {
	_, url := provider(t)
	two := configText(t, url, twoKeys...)
	cases := []struct {
		name, text, key string
		want            string // error text; "" = serves, principal below
		principal       string
		owner           string // the key that owns the run
	}{
		{"the only key", configText(t, url), "", "", "cust_42", "support-bot"},
		{"named key", two, "billing", "", "billing", "billing"},
		{"several keys, none named", two, "", "choose whose principal", "", ""},
		{"no such key", two, "nobody", `no auth.keys entry is named "nobody"`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gw := gateway(t, c.text)
			if c.want != "" {
				r, w := io.Pipe()
				defer w.Close()
				err := mcpserver.Serve(t.Context(), gw, mcpserver.Options{Key: c.key}, mcpserver.StdioTransport(r, io.Discard))
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Serve: %v, want an error containing %q", err, c.want)
				}
				return
			}
			ct, st := mcp.NewInMemoryTransports()
			done := make(chan error, 1)
			go func() {
				done <- mcpserver.Serve(context.Background(), gw, mcpserver.Options{Key: c.key, RunID: "run-" + c.principal}, st)
			}()
			cs := connect(t, ct)
			_, env := mustCall(t, cs, "get_order", map[string]any{"order_id": orderID}, nil)
			if env.Meta.RunID != "run-"+c.principal {
				t.Errorf("run %s, want Options.RunID run-%s", env.Meta.RunID, c.principal)
			}
			run, err := gw.GetRun(t.Context(), types.ScopedRunID(c.owner, env.Meta.RunID))
			if err != nil {
				t.Fatal(err)
			}
			if run.Principal.ID != c.principal {
				t.Errorf("principal %+v, want %s", run.Principal, c.principal)
			}
			cs.Close()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}
