package mcpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/tracectx"
)

// tracker is what one tools/call attempt learns from the transport: whether
// the request was written, and the raw answer.
type tracker struct {
	mu   sync.Mutex
	id   jsonrpc.ID
	sent bool
	raw  json.RawMessage
	// relay, for a call on a session of its own, counts the progress and
	// logging notifications read, so that the call drains them.
	relay *relay
}

type trackerKey struct{}

func withTracker(ctx context.Context, tr *tracker) context.Context {
	return context.WithValue(ctx, trackerKey{}, tr)
}

func trackerOf(ctx context.Context) *tracker {
	tr, _ := ctx.Value(trackerKey{}).(*tracker)
	return tr
}

func (tr *tracker) markSent() {
	tr.mu.Lock()
	tr.sent = true
	tr.mu.Unlock()
}

func (tr *tracker) result() (sent bool, raw json.RawMessage) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.sent, tr.raw
}

// trackedTransport wraps a transport so that its connection reports writes
// and answers to the trackers of the calls.
type trackedTransport struct {
	mcp.Transport
	relay *relay // a call's own session: notifications to count
}

// Connect connects the wrapped transport.
func (t trackedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &trackedConn{Connection: c, calls: map[jsonrpc.ID]*tracker{}, relay: t.relay}, nil
}

// trackedConn is a connection that knows which requests were written and
// keeps the raw result of the tracked ones.
type trackedConn struct {
	mcp.Connection
	mu    sync.Mutex
	calls map[jsonrpc.ID]*tracker
	relay *relay
}

// Write writes a message; a tracked call's request is marked sent once it
// was written (on stdio, once the write returned).
func (c *trackedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	tr := trackerOf(ctx)
	req, isReq := msg.(*jsonrpc.Request)
	if tr != nil && isReq && req.IsCall() && req.Method == "tools/call" {
		c.mu.Lock()
		tr.mu.Lock()
		tr.id = req.ID
		tr.mu.Unlock()
		c.calls[req.ID] = tr
		c.mu.Unlock()
	}
	err := c.write(ctx, msg)
	if tr != nil && isReq && req.Method == "tools/call" && (err == nil || errors.Is(err, errWriteStuck)) {
		tr.markSent() // a stuck write may have delivered part or all of it: unknown
	}
	return err
}

// maxWriteWait bounds a write to a stdio server's stdin whose context has
// no sooner deadline.
const maxWriteWait = 30 * time.Second

// errWriteStuck is the error of a write the server did not read in time.
var errWriteStuck = errors.New("the MCP server stopped reading its stdin; toolgate ends it and starts it again")

// write writes one message within the context's deadline (at most
// maxWriteWait). A server that does not read it in time is ended: its
// stdin is closed (which also ends the stuck write) and then it is
// signalled; the pool starts it again when the session ends.
func (c *trackedConn) write(ctx context.Context, msg jsonrpc.Message) error {
	wait := maxWriteWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	done := make(chan error, 1)
	go func() { done <- c.Connection.Write(ctx, msg) }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	case <-timer.C:
	}
	select {
	case err := <-done: // it finished after all
		return err
	default:
	}
	go c.Connection.Close() // closing stdin waits for the process: not on the caller's time
	return errWriteStuck
}

// Read reads a message; a tracked call's answer is kept raw.
func (c *trackedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && c.relay != nil && !req.IsCall() && isRelayed(req.Method) {
		c.relay.noteSeen()
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		tr := c.calls[resp.ID]
		delete(c.calls, resp.ID)
		c.mu.Unlock()
		if tr != nil && resp.Error == nil {
			tr.mu.Lock()
			tr.raw = resp.Result
			tr.mu.Unlock()
		}
	}
	return msg, err
}

// forget drops a call that ended without an answer.
func (c *trackedConn) forget(tr *tracker) {
	tr.mu.Lock()
	id := tr.id
	tr.mu.Unlock()
	c.mu.Lock()
	if c.calls[id] == tr {
		delete(c.calls, id)
	}
	c.mu.Unlock()
}

// headerTransport is the HTTP client transport of a streamable HTTP server:
// it adds the configured headers and marks a tracked call sent when its
// request has been written (httptrace WroteRequest), which a connect
// failure never reaches.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	origin  string // the configured URL's scheme://host:port: the only one that gets headers
}

// RoundTrip sends one HTTP request. The configured headers go only to the
// configured URL's origin.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if origin(req.URL.String()) == t.origin {
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	tracectx.Inject(req.Context(), req.Header) // traceparent of the call, when it has one
	if tr := trackerOf(req.Context()); tr != nil {
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			WroteRequest: func(info httptrace.WroteRequestInfo) {
				if info.Err == nil {
					tr.markSent()
				}
			},
		}))
	}
	resp, err := t.base.RoundTrip(req)
	if tr := trackerOf(req.Context()); err == nil && tr != nil { // the POST, or a GET resuming its stream
		resp.Body = &answerBody{ReadCloser: resp.Body, tr: tr, sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")}
	}
	return resp, err
}

// maxAnswerBytes bounds what answerBody keeps of one message.
const maxAnswerBytes = 8 << 20

// answerBody reads the answer to a tracked tools/call (its POST, or the GET
// that resumes its event stream) as the SDK reads it, and keeps the raw
// result of the JSON-RPC response in it (an SSE event or the whole JSON
// body), so that numbers stay exact. The result is kept before the SDK gets
// the bytes that complete it.
type answerBody struct {
	io.ReadCloser
	tr   *tracker
	sse  bool
	buf  []byte
	over bool
}

// Read passes the bytes on, keeping the response's result once seen.
func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.over {
		return n, err
	}
	b.buf = append(b.buf, p[:n]...)
	if len(b.buf) > maxAnswerBytes {
		b.over, b.buf = true, nil
		return n, err
	}
	if b.sse {
		for {
			end := bytes.Index(b.buf, []byte("\n\n"))
			if end < 0 {
				break
			}
			b.event(b.buf[:end])
			b.buf = b.buf[end+2:]
		}
	} else if err == io.EOF {
		b.keep(b.buf)
	}
	return n, err
}

// event handles one SSE event: its data lines are one JSON-RPC message.
func (b *answerBody) event(ev []byte) {
	var data []byte
	for _, line := range bytes.Split(ev, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(rest, []byte(" "))...)
		}
	}
	b.keep(data)
}

// keep records the result of a JSON-RPC response (not of a request or a
// notification of the server's).
func (b *answerBody) keep(msg []byte) {
	var m struct {
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	if b.tr.relay != nil && isRelayed(m.Method) {
		b.tr.relay.noteSeen()
	}
	if m.Method != "" || len(m.Result) == 0 {
		return
	}
	b.tr.mu.Lock()
	b.tr.raw = append(json.RawMessage(nil), m.Result...)
	b.tr.mu.Unlock()
}

// origin is a URL's scheme://host:port (the port spelled out), "" when it
// does not parse.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// noRedirects is an http.Client's CheckRedirect that follows none: the 3xx
// answer is returned as it is.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
