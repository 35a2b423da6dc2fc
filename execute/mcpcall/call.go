package mcpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute"
	"github.com/toolgate/toolgate/internal/tracectx"
	"github.com/toolgate/toolgate/types"
)

// jsonrpc2Rejected is the code of the SDK's "rejected by transport" error:
// the transport failed the request, the server did not answer it.
const jsonrpc2Rejected = -32005

// errReadTimeout is the cause of a tools/call cut by the read timeout.
var errReadTimeout = errors.New("read timeout")

// Do runs one attempt: one tools/call of the tool on its server.
func (p *Pool) Do(ctx context.Context, a *execute.Attempt) (*execute.Response, *execute.Failure) {
	if a.Tool == nil || a.Dependency == nil {
		return nil, invalid(a, "the attempt has no tool or no dependency")
	}
	s := p.servers[a.Dependency.Name]
	if s == nil {
		return nil, invalid(a, fmt.Sprintf("no MCP server named %q", a.Dependency.Name))
	}
	args, f := attemptArgs(a)
	if f != nil {
		return nil, f
	}
	connectTimeout := orDefault(a.Tool.Timeout.Connect.D(), config.DefaultConnectTimeout)
	readTimeout := orDefault(a.Tool.Timeout.Read.D(), config.DefaultReadTimeout)

	cs, conn, rl, err := s.callSession(ctx, connectTimeout)
	if err != nil {
		return nil, connectFailure(ctx, s.name, connectTimeout, err)
	}
	if rl != nil {
		defer s.release(cs)
	}

	remote := remoteName(a.Tool)
	params := &mcp.CallToolParams{Name: remote, Arguments: json.RawMessage(args), Meta: callMeta(ctx, a, rl)}
	tr := &tracker{relay: rl}
	rctx, cancelRead := context.WithTimeoutCause(ctx, readTimeout, errReadTimeout)
	defer cancelRead()
	res, err := cs.CallTool(withTracker(rctx, tr), params)
	if conn != nil {
		conn.forget(tr)
	}
	sent, raw := tr.result()
	if rl != nil {
		rl.drain(rctx)
	}
	if err != nil {
		f := callFailure(ctx, rctx, s.name, remote, readTimeout, sent, err)
		s.afterFailure(ctx, cs, rl, f, sent, err)
		return nil, f
	}
	s.healthy()
	return s.response(remote, res, raw, rl)
}

// attemptArgs are the attempt's arguments as JSON: the canonical encoding
// it carries, else encoded here.
func attemptArgs(a *execute.Attempt) ([]byte, *execute.Failure) {
	if a.Canonical != nil {
		return a.Canonical, nil
	}
	b, err := canonical(a.Args)
	if err != nil {
		return nil, invalid(a, "encoding the arguments: "+err.Error())
	}
	return b, nil
}

// remoteName is the tool's name on its server: the name it was imported
// under, else its own.
func remoteName(t *config.Tool) string {
	if t.Source != nil && t.Source.Name != "" {
		return t.Source.Name
	}
	return t.Name
}

// afterFailure settles what a failed tools/call (f, from err) means for
// its session. A call on a session of its own (rl set) adds the relay's
// note to f's message; that session is closed by the caller. The shared
// session is dropped, so that the next attempt starts a new one, when the
// server no longer knows it or the connection broke, or when the request
// was not sent although the caller is still waiting.
func (s *server) afterFailure(ctx context.Context, cs *mcp.ClientSession, rl *relay, f *execute.Failure, sent bool, err error) {
	if rl != nil {
		f.Message = withNote(f.Message, rl)
		return
	}
	// A server that no longer knows the session (it restarted) answers
	// 404. Once the request was written that proves nothing (a proxy
	// before it, or the server itself, may have acted on it): a write's
	// outcome is unknown (issue 27 #15). The session is dropped either way.
	missing := errors.Is(err, mcp.ErrSessionMissing)
	if missing || !sent && parent(ctx) || errors.Is(err, mcp.ErrConnectionClosed) || f.Kind == execute.KindReset {
		s.dropped(cs) // the next attempt starts a new session
	}
}

// response reads the server's answer to a tools/call of remote: its data,
// or a failure when it cannot be read or is the tool's refusal
// (isError), which carries the relay's note like a success does.
func (s *server) response(remote string, res *mcp.CallToolResult, raw json.RawMessage, rl *relay) (*execute.Response, *execute.Failure) {
	data, text, content, err := answer(res, raw)
	if err != nil {
		return nil, &execute.Failure{Kind: execute.KindToolError, Delivered: true, Code: types.CodeUpstreamError,
			Message: fmt.Sprintf("%s answered %s with a result toolgate cannot read: %v", s.name, remote, err), Err: err}
	}
	if res.IsError {
		msg := fmt.Sprintf("%s refused %s", s.name, remote)
		if text != "" {
			msg += ": " + text
		}
		msg = withNote(msg, rl)
		return nil, &execute.Failure{Kind: execute.KindToolError, Delivered: true, Code: types.CodeRejected, Data: data, Message: msg}
	}
	return &execute.Response{Status: 200, Data: data, Content: content, Note: rl.note()}, nil
}

// callSession is the session a call runs on. A call whose MCP caller
// wants progress or may be asked something (sampling, elicitation, roots)
// runs on a session of its own (rl set; the caller closes it), which
// declares the caller's capabilities: everything the upstream sends on it
// belongs to this call, however many calls are in flight. Other calls
// share the server's session.
func (s *server) callSession(ctx context.Context, timeout time.Duration) (cs *mcp.ClientSession, conn *trackedConn, rl *relay, err error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if c := callerOf(ctx); c.private() {
		rl = newRelay(ctx, c)
		cs, conn, err = s.privateSession(cctx, rl)
		return cs, conn, rl, err
	}
	cs, conn, err = s.session(cctx)
	return cs, conn, nil, err
}

// callMeta is the _meta of a tools/call: a write's operation key, the
// call's trace context (traceparent, tracestate) and the caller's
// progressToken; nil when empty.
func callMeta(ctx context.Context, a *execute.Attempt, rl *relay) mcp.Meta {
	m := mcp.Meta{}
	if a.OperationKey != "" && a.Tool.Effect != types.EffectRead {
		m[OperationKeyMeta] = a.OperationKey
	}
	tracectx.InjectMeta(ctx, m)
	if rl != nil && rl.caller.ProgressToken != nil {
		m["progressToken"] = rl.caller.ProgressToken
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// withNote is msg with the relay's note (who was asked), if any.
func withNote(msg string, rl *relay) string {
	if n := rl.note(); n != "" {
		return msg + " " + n
	}
	return msg
}

// parent reports whether the caller's context is still live: a request not
// sent because the caller gave up says nothing about the session.
func parent(ctx context.Context) bool { return ctx.Err() == nil }

// connectFailure classifies a failure to reach or initialise the server:
// nothing of the call was sent.
func connectFailure(parent context.Context, dep string, timeout time.Duration, err error) *execute.Failure {
	f := &execute.Failure{Kind: execute.KindConnectFailed, Delivered: false, Transient: true, Code: types.CodeConnectFailed, Err: err}
	switch {
	case errors.Is(err, errClosed):
		f.Transient, f.Code = false, types.CodeUnavailable
		f.Message = fmt.Sprintf("toolgate is shutting down; nothing was sent to %s", dep)
	case parent.Err() != nil:
		f.Kind, f.Transient, f.Code = execute.KindCanceled, false, types.CodeUnavailable
		f.Message = fmt.Sprintf("the call was cancelled before the request to %s was sent (%v)", dep, context.Cause(parent))
	case errors.Is(err, context.DeadlineExceeded):
		f.Kind, f.Code = execute.KindConnectTimeout, types.CodeConnectTimeout
		f.Message = fmt.Sprintf("no MCP session with %s within %s (connect and initialize)", dep, timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		f.Kind = execute.KindConnectRefused
		f.Message = fmt.Sprintf("%s refused the connection", dep)
	default:
		f.Message = oneLine(fmt.Sprintf("cannot start an MCP session with %s: %v", dep, err))
	}
	return f
}

// callFailure classifies a tools/call that ended without a result.
func callFailure(parent, rctx context.Context, dep, tool string, readTimeout time.Duration, sent bool, err error) *execute.Failure {
	var werr *jsonrpc.Error
	switch {
	case !sent && parent.Err() != nil:
		return &execute.Failure{Kind: execute.KindCanceled, Delivered: false, Code: types.CodeUnavailable, Err: err,
			Message: fmt.Sprintf("the call was cancelled before the request to %s was sent (%v)", dep, context.Cause(parent))}
	case !sent:
		// The transport never wrote the request (the SDK's "rejected by
		// transport" is one such error: its HTTP request failed).
		return &execute.Failure{Kind: execute.KindConnectFailed, Delivered: false, Transient: true, Code: types.CodeConnectFailed, Err: err,
			Message: oneLine(fmt.Sprintf("the tools/call request to %s could not be sent: %v", dep, err))}
	case errors.As(err, &werr) && werr.Code != jsonrpc2Rejected:
		// The server answered the request with a protocol error.
		f := &execute.Failure{Kind: execute.KindToolError, Delivered: true, Code: types.CodeRejected, Err: err,
			Message: oneLine(fmt.Sprintf("%s refused %s: %s", dep, tool, werr.Message))}
		if werr.Code == jsonrpc.CodeInternalError {
			f.Code, f.Transient = types.CodeUpstreamError, true
		}
		return f
	case errors.Is(context.Cause(rctx), errReadTimeout) && parent.Err() == nil:
		return &execute.Failure{Kind: execute.KindReadTimeout, Delivered: true, Transient: true, Code: types.CodeTimeoutUnknownOutcome, Err: err,
			Message: fmt.Sprintf("no answer from %s to %s within %s after the request was sent (toolgate sent notifications/cancelled)", dep, tool, readTimeout)}
	case parent.Err() != nil:
		return &execute.Failure{Kind: execute.KindCanceled, Delivered: true, Code: types.CodeTimeoutUnknownOutcome, Err: err,
			Message: fmt.Sprintf("the call was cancelled after the request to %s was sent (%v)", dep, context.Cause(parent))}
	}
	return &execute.Failure{Kind: execute.KindReset, Delivered: true, Transient: true, Code: types.CodeTimeoutUnknownOutcome, Err: err,
		Message: oneLine(fmt.Sprintf("the session with %s broke after the request to %s was sent: %v", dep, tool, err))}
}

// wireResult is the part of a raw tools/call result that answer reads.
type wireResult struct {
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           json.RawMessage `json:"content"`
}

// answer is a result's data, its text and its content blocks as sent:
// data is structuredContent when present, else the text content
// (JSON-decoded when it is one JSON text), else null (the content blocks
// carry the rest: images, audio, links, resources). raw, when the
// transport kept it, is read instead of the SDK's decoding, so that
// numbers stay exact and every field of a block is kept.
func answer(res *mcp.CallToolResult, raw json.RawMessage) (data json.RawMessage, text string, content json.RawMessage, err error) {
	if raw == nil {
		if raw, err = json.Marshal(res); err != nil {
			return nil, "", nil, err
		}
	}
	var w wireResult
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, "", nil, err
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if c := bytes.TrimSpace(w.Content); len(c) > 0 && string(c) != "null" {
		if err := json.Unmarshal(c, &blocks); err != nil {
			return nil, "", nil, fmt.Errorf("content: %w", err)
		}
		if len(blocks) > 0 {
			content = compact(c)
		}
	}
	var texts []string
	for _, c := range blocks {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	text = oneLine(strings.Join(texts, " "))
	if s := bytes.TrimSpace(w.StructuredContent); len(s) > 0 && string(s) != "null" {
		return compact(s), text, content, nil
	}
	if len(texts) == 1 {
		if t := bytes.TrimSpace([]byte(texts[0])); json.Valid(t) && len(t) > 0 {
			return compact(t), text, content, nil
		}
	}
	if len(texts) > 0 {
		b, err := json.Marshal(strings.Join(texts, "\n"))
		return b, text, content, err
	}
	return json.RawMessage("null"), text, content, nil
}

func compact(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return json.RawMessage(b)
	}
	return buf.Bytes()
}

// canonical encodes the arguments with sorted keys and exact numbers.
func canonical(args map[string]any) ([]byte, error) {
	if args == nil {
		args = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func invalid(a *execute.Attempt, why string) *execute.Failure {
	name := "the tool"
	if a != nil && a.Tool != nil {
		name = a.Tool.Name
	}
	return &execute.Failure{Kind: execute.KindInvalidRequest, Code: types.CodeInternalError,
		Message: fmt.Sprintf("cannot call %s: %s", name, why)}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// maxMessageRunes bounds a message built from a server's text.
const maxMessageRunes = 300

// oneLine collapses whitespace and bounds s.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxMessageRunes {
		s = string([]rune(s)[:maxMessageRunes]) + "…"
	}
	return s
}
