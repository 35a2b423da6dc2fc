package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// apiError is a refusal of the gateway itself, answered with a 4xx/5xx
// status and the result envelope.
type apiError struct {
	status  int
	code    types.Code
	message string
	// runID and tool fill the envelope's meta when known.
	runID, tool string
	// cause is logged, never sent.
	cause error
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: types.CodeBadRequest, message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, code: types.CodeNotFound, message: fmt.Sprintf(format, args...)}
}

func noSuchRun(id string) *apiError {
	e := notFound("there is no run %q (or it belongs to another API key)", clip(id))
	e.runID = clip(id)
	return e
}

// storeError maps a failure to read or write the store: 503 when the store
// is closed or unreachable, 404 for an unknown run, else 500.
func storeError(err error) *apiError {
	switch {
	case errors.Is(err, toolgate.ErrUnknownRun), errors.Is(err, store.ErrNotFound):
		return &apiError{status: http.StatusNotFound, code: types.CodeNotFound, message: "the run does not exist", cause: err}
	case errors.Is(err, store.ErrClosed):
		return &apiError{status: http.StatusServiceUnavailable, code: types.CodeUnavailable,
			message: "toolgate's store is closed (the server is shutting down)", cause: err}
	case errors.Is(err, context.Canceled):
		// The client went away before the call was admitted: nothing was
		// done, and nobody reads the answer.
		return &apiError{status: statusClientClosed, code: types.CodeBadRequest,
			message: "the client closed the request before it was admitted; nothing was done", cause: err}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, store.ErrUnavailable):
		return &apiError{status: http.StatusServiceUnavailable, code: types.CodeStoreUnavailable,
			message: "toolgate's database did not answer in time", cause: err}
	}
	return internalError(err)
}

// statusClientClosed is the status logged for a request whose client went
// away (nginx's 499): no one reads it.
const statusClientClosed = 499

func internalError(cause error) *apiError {
	return &apiError{status: http.StatusInternalServerError, code: types.CodeInternalError,
		message: "toolgate failed while handling this request; the details are in its log", cause: cause}
}

// advice is what an agent should do after each gateway refusal.
var advice = map[types.Code]struct {
	next types.Next
	text string
}{
	types.CodeBadRequest:       {types.NextFixArgs, "Nothing was done. Fix the request and send it again; the same request will be refused the same way."},
	types.CodeUnauthorized:     {types.NextEscalate, "Nothing was done. Do not retry with the same key; ask whoever runs the agent host for a valid toolgate key."},
	types.CodeNotFound:         {types.NextStop, "Nothing was done. Check the id in the URL; to start over, create a run with POST /v1/runs."},
	types.CodeRunExists:        {types.NextFixArgs, "Nothing was done. Use the existing run, or create this one with another run_id (or none, to get a fresh one)."},
	types.CodeBodyTooLarge:     {types.NextFixArgs, "Nothing was done. Send a smaller body: shorten the arguments or pass large content by reference."},
	types.CodeUnsupportedType:  {types.NextFixArgs, "Nothing was done. Send the body as JSON with the header Content-Type: application/json."},
	types.CodeInternalError:    {types.NextEscalate, "Nothing was done by this request. Try again shortly, and escalate if it keeps happening."},
	types.CodeUnavailable:      {types.NextWait, "Nothing was done. Wait a few seconds and send the same request again."},
	types.CodeStoreUnavailable: {types.NextWait, "Nothing was done and nothing was sent. Wait a second and send the same request again."},
	types.CodeForbidden:        {types.NextEscalate, "Nothing was done. This key may not do this; do not retry, escalate to whoever runs toolgate."},
}

// envelope is the result envelope of a gateway refusal.
func (e *apiError) envelope() *types.Result {
	a, ok := advice[e.code]
	if !ok {
		a = advice[types.CodeBadRequest]
	}
	res := &types.Result{
		OK:    false,
		Data:  json.RawMessage("null"),
		Error: types.NewError(e.code, e.message),
		Meta:  types.Meta{RunID: e.runID, Tool: e.tool, SideEffect: types.SideEffectNone, Next: a.next},
		Observation: fmt.Sprintf("toolgate refused the request (%s, HTTP %d): %s. %s",
			e.code, e.status, strings.TrimSuffix(e.message, "."), a.text),
	}
	switch e.code {
	case types.CodeUnavailable:
		res.Meta.RetryAfterMS = 2000
	case types.CodeStoreUnavailable:
		res.Meta.RetryAfterMS = 1000
		res.Error.Retryable = true
	}
	return res
}

// writeError answers a refusal and logs it: the one place a gateway
// refusal is logged.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	level, quieted := slog.LevelInfo, 0
	switch {
	case e.status >= 500:
		level = slog.LevelError
	case e.status == http.StatusUnauthorized:
		level, quieted = s.refusals.level(r, time.Now())
	}
	attrs := []slog.Attr{
		slog.String("method", r.Method), slog.String("path", clip(r.URL.Path)),
		slog.Int("status", e.status), slog.String("code", string(e.code)),
		slog.String("key", KeyName(r.Context())), slog.String("message", e.message),
	}
	if e.cause != nil {
		attrs = append(attrs, slog.String("err", e.cause.Error()))
	}
	if quieted > 0 {
		attrs = append(attrs, slog.Int("refused_unlogged_since_last", quieted))
	}
	s.log.LogAttrs(r.Context(), level, "request refused", attrs...)
	respond(w, e)
}

// respond answers a refusal without logging it.
func respond(w http.ResponseWriter, e *apiError) {
	switch e.code {
	case types.CodeUnavailable:
		w.Header().Set("Retry-After", "2")
	case types.CodeStoreUnavailable:
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, e.status, e.envelope())
}

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // observations are read by models: "<key>", not "\u003ckey\u003e"
	if err := enc.Encode(v); err != nil {
		// Only a value the server built can get here; never a client's.
		status = http.StatusInternalServerError
		buf.Reset()
		_ = enc.Encode(internalError(err).envelope())
	}
	writeEncoded(w, status, buf.Bytes())
}

// The values of the headers of every JSON answer, shared (never changed:
// Header().Set replaces a value, and an append to a full slice copies it).
var (
	jsonContentType = []string{"application/json"}
	nosniff         = []string{"nosniff"}
)

// writeEncoded answers status with body, JSON already encoded.
func writeEncoded(w http.ResponseWriter, status int, body []byte) {
	// The keys are canonical already and the values shared: Header().Set
	// would canonicalize each key and allocate each value, on every call.
	h := w.Header()
	h["Content-Type"], h["X-Content-Type-Options"] = jsonContentType, nosniff
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// WriteError answers a gateway refusal in the shared envelope, for mounted
// handlers: status is the HTTP status, code one of the gateway codes of
// package types, message names the problem.
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, status int, code types.Code, message string) {
	s.writeError(w, r, &apiError{status: status, code: code, message: message})
}

// serveHTTP is the whole API: recovery, then the mux, with JSON envelopes
// for the mux's own 404 and 405 answers.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	tw := &trackingWriter{ResponseWriter: w}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		// Logged here, once, with the stack; the answer never has either.
		s.log.Error("panic serving request", "method", r.Method, "path", clip(r.URL.Path),
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		if !tw.wrote {
			respond(tw, internalError(nil))
		}
	}()
	if s.refuseForeignHost(tw, r) {
		return
	}
	// One lookup: the route's handler clears routing as it starts (see
	// handle); without a route, the mux's own 404 or 405 is held back and
	// answered here in the envelope (the mux knows the allowed methods).
	tw.routing = true
	s.mux.ServeHTTP(tw, r)
	status := tw.fallback
	tw.routing, tw.fallback = false, 0
	switch status {
	case 0:
	case http.StatusMethodNotAllowed:
		allow := tw.Header().Get("Allow") // set by the mux
		s.writeError(tw, r, &apiError{status: http.StatusMethodNotAllowed, code: types.CodeBadRequest,
			message: fmt.Sprintf("method %s is not allowed on %s; allowed: %s", r.Method, clip(r.URL.Path), allow)})
	default:
		s.writeError(tw, r, notFound("there is no endpoint %s %s; the API is under /v1 (see GET /v1/tools)", r.Method, clip(r.URL.Path)))
	}
}

// routed clears the writer's routing as the route's handler starts: what
// it writes is its own answer.
func routed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tw, ok := w.(*trackingWriter); ok {
			tw.routing = false
		}
		h.ServeHTTP(w, r)
	})
}

// trackingWriter remembers whether the answer has started, so a panic
// after it is not answered twice. It unwraps for http.ResponseController.
//
// While routing is set no route's handler has started: a 404 or 405
// written then is the mux's own answer, held back in fallback (its body
// discarded) for serveHTTP to answer in the envelope. Any other status
// (the mux's redirect of an unclean path) goes out as it is.
type trackingWriter struct {
	http.ResponseWriter
	wrote    bool
	routing  bool
	fallback int
}

func (t *trackingWriter) WriteHeader(status int) {
	if t.routing {
		t.routing = false
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			t.fallback = status
			return
		}
	}
	t.wrote = true
	t.ResponseWriter.WriteHeader(status)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	if t.fallback != 0 {
		return len(b), nil
	}
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Flush lets streaming handlers (server-sent events) flush through.
func (t *trackingWriter) Flush() {
	t.wrote = true
	_ = http.NewResponseController(t.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// clip shortens a client-supplied string for a message or a log line.
func clip(s string) string {
	const max = 128
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
