package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// StatelessRevision is the first MCP revision without sessions: its
// requests carry their protocol version (the MCP-Protocol-Version header and
// _meta), there is no initialize and no Mcp-Session-Id, and a client learns
// what the server speaks from server/discover.
const StatelessRevision = "2026-07-28"

// The _meta key of a 2026-07-28 request's protocol version.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// route serves one request of /mcp with the SDK handler that speaks its
// revision: a POST without Mcp-Session-Id that is a 2026-07-28 request (its
// MCP-Protocol-Version header or _meta says so) or a server/discover goes
// to the stateless handler; everything else (initialize, and every request
// of a session) to the session handler. An initialize past the key's
// session cap is refused with 429 before a session is made.
func (h *HTTPHandler) route(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get("Mcp-Session-Id"); r.Method != http.MethodPost || id != "" {
		h.stateful.ServeHTTP(w, r)
		if r.Method == http.MethodDelete && id != "" {
			// The SDK closed the session (if it was the key's): its place
			// is free now, not when its end is noticed.
			h.sessions.forget(keyOf(r), id)
		}
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	kind := classify(r.Header.Get("Mcp-Protocol-Version"), body)
	if kind == kindStateless {
		h.stateless.ServeHTTP(w, r)
		return
	}
	if kind == kindInitialize {
		key := keyOf(r)
		if !h.sessions.reserve(key) {
			h.tooManySessions(w, key)
			return
		}
		// The place is given back when the answer starts (the session, if
		// one was made, is counted as live by then), not after it: a client
		// that opens its next session as soon as it reads the answer must
		// not find this place still taken.
		rw := &unreserveOnWrite{ResponseWriter: w, release: func() { h.sessions.unreserve(key) }}
		defer rw.done()
		w = rw
	}
	h.stateful.ServeHTTP(w, r)
}

// unreserveOnWrite calls release once, at the first byte or header of the
// answer, or when the request is done if nothing was written.
type unreserveOnWrite struct {
	http.ResponseWriter
	once    sync.Once
	release func()
}

func (u *unreserveOnWrite) done() { u.once.Do(u.release) }

func (u *unreserveOnWrite) WriteHeader(status int) {
	u.done()
	u.ResponseWriter.WriteHeader(status)
}

func (u *unreserveOnWrite) Write(b []byte) (int, error) {
	u.done()
	return u.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer
// (flushes of a streamed answer, deadlines).
func (u *unreserveOnWrite) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// tooManySessions answers 429 with a JSON-RPC error that says what to do.
func (h *HTTPHandler) tooManySessions(w http.ResponseWriter, key string) {
	who := "this key"
	if key != "" {
		who = fmt.Sprintf("the key %q", key)
	}
	msg := fmt.Sprintf("toolgate: %s already holds %d MCP sessions, the most one key may hold; "+
		"end one (DELETE /mcp with its Mcp-Session-Id), let an idle one expire (after %s), "+
		"or speak MCP %s, which needs no session", who, h.sessions.max, h.timeout, StatelessRevision)
	b, _ := json.Marshal(struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", nil, jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "60")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(append(b, '\n'))
}

// keyOf is the name of the request's bearer key ("" in development mode).
func keyOf(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

type requestKind int

const (
	kindOther requestKind = iota
	kindInitialize
	kindStateless
)

// classify says which handler a POST without a session serves: the header's
// revision when it is 2026-07-28 or later, else the body's (a single message
// or a batch): server/discover or a _meta protocol version of 2026-07-28 or
// later is stateless, initialize opens a session. A body that is not JSON-RPC
// goes to the session handler, which refuses it.
func classify(header string, body []byte) requestKind {
	if header >= StatelessRevision {
		return kindStateless
	}
	type message struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	var msgs []message
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return kindOther
		}
	} else {
		var m message
		if json.Unmarshal(body, &m) != nil {
			return kindOther
		}
		msgs = append(msgs, m)
	}
	kind := kindOther
	for _, m := range msgs {
		if v, _ := m.Params.Meta[metaProtocolVersion].(string); v >= StatelessRevision || m.Method == "server/discover" {
			return kindStateless
		}
		if m.Method == "initialize" {
			kind = kindInitialize
		}
	}
	return kind
}
