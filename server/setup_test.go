package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Keys of the test server.
const (
	alphaKey = "alpha-key-0123456789"
	betaKey  = "beta-key-0123456789x"
)

// bundle is one test's gateway, server and HTTP front.
type bundle struct {
	t    *testing.T
	gw   *toolgate.Gateway
	srv  *Server
	ts   *httptest.Server
	logs *logSink
	// entered receives one value per call of the hold tool as it starts;
	// release lets them all finish.
	entered chan struct{}
	release chan struct{}
}

type setupOpts struct {
	noKeys  bool
	config  func(*config.Config)
	mounts  []Mount
	options func(*Options)
}

// testConfig has Go-function tools only, so no dependency is needed:
// echo (read) answers its arguments, hold (write) waits for the test.
func testConfig(entered, release chan struct{}) *config.Config {
	return &config.Config{
		Store: "memory",
		Auth: config.Auth{Keys: []config.Key{
			{Name: "alpha", Key: alphaKey}, {Name: "beta", Key: betaKey},
		}},
		Tools: map[string]*config.Tool{
			"echo": {Description: "Answers its arguments.", Effect: types.EffectRead,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{
					"n": map[string]any{"type": "integer"}, "s": map[string]any{"type": "string"},
				}, "additionalProperties": false},
				State: map[string]string{"last": "args.n"},
				Func: func(ctx context.Context, args json.RawMessage) (any, error) {
					return args, nil
				}},
			"hold": {Description: "Waits for the test, then answers.", Effect: types.EffectWrite,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}},
				Func: func(ctx context.Context, args json.RawMessage) (any, error) {
					entered <- struct{}{}
					<-release
					return map[string]any{"done": true}, nil
				}},
		},
	}
}

func setup(t *testing.T, o setupOpts) *bundle {
	t.Helper()
	b := &bundle{t: t, logs: &logSink{}, entered: make(chan struct{}, 64), release: make(chan struct{})}
	cfg := testConfig(b.entered, b.release)
	if o.noKeys {
		cfg.Auth.Keys = nil
	}
	if o.config != nil {
		o.config(cfg)
	}
	logger := slog.New(b.logs)
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: cfg, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Gateway: gw, Logger: logger, Mounts: o.mounts}
	if o.options != nil {
		o.options(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		gw.Close()
		t.Fatal(err)
	}
	b.gw, b.srv = gw, srv
	b.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		b.ts.Close()
		gw.Close()
	})
	return b
}

// response is one answer, decoded.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) envelope(t *testing.T) *types.Result {
	t.Helper()
	var res types.Result
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatalf("not an envelope: %v\n%s", err, r.body)
	}
	return &res
}

func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("status %d, not JSON: %v\n%s", r.status, err, r.body)
	}
}

// req is one request to send.
type req struct {
	method, path, key, ctype string
	body                     io.Reader
	header                   map[string]string
}

func (b *bundle) do(r req) *response {
	b.t.Helper()
	hr, err := http.NewRequest(r.method, b.ts.URL+r.path, r.body)
	if err != nil {
		b.t.Fatal(err)
	}
	if r.key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.key)
	}
	if r.ctype != "" {
		hr.Header.Set("Content-Type", r.ctype)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	resp, err := b.ts.Client().Do(hr)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}
}

func (b *bundle) post(path, key, body string) *response {
	b.t.Helper()
	return b.do(req{method: "POST", path: path, key: key, ctype: "application/json", body: strings.NewReader(body)})
}

func (b *bundle) get(path, key string) *response {
	b.t.Helper()
	return b.do(req{method: "GET", path: path, key: key})
}

// startRun creates a run for key and returns its id.
func (b *bundle) startRun(key, body string) string {
	b.t.Helper()
	resp := b.post("/v1/runs", key, body)
	if resp.status != http.StatusCreated {
		b.t.Fatalf("create run: %d %s", resp.status, resp.body)
	}
	var doc RunDocument
	resp.decode(b.t, &doc)
	return doc.RunID
}

// logSink is a slog handler that keeps the records for the test.
type logSink struct {
	mu      sync.Mutex
	records []slog.Record
	// onRecord, when set, sees every record's message.
	onRecord func(msg string)
}

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	f := l.onRecord
	l.mu.Unlock()
	if f != nil {
		f(r.Message)
	}
	return nil
}
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logSink) WithGroup(string) slog.Handler      { return l }

// text returns every record as "LEVEL message k=v ..." lines.
func (l *logSink) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, r := range l.records {
		b.WriteString(r.Level.String() + " " + r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			return true
		})
		b.WriteString("\n")
	}
	return b.String()
}
