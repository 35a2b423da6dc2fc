package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/types"
)

// recorder is a dependency that answers every request with {"ok":true}
// and keeps what it was sent, as it arrived on the wire.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []seenRequest
	// answer, when set, serves the request instead.
	answer http.HandlerFunc
}

// seenRequest is one request as the dependency saw it.
type seenRequest struct {
	method, escapedPath, rawQuery string
	header                        http.Header
}

func startRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, seenRequest{method: r.Method, escapedPath: r.URL.EscapedPath(), rawQuery: r.URL.RawQuery, header: r.Header.Clone()})
		answer := rec.answer
		rec.mu.Unlock()
		if answer != nil {
			answer(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

// requests returns what the dependency was sent so far and forgets it.
func (rec *recorder) requests() []seenRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := rec.seen
	rec.seen = nil
	return seen
}

// pinnedKey is a key whose principal is pinned in the config.
const pinnedKey = "pinned-bot-key-0123456789"

// securityYAML is a config of ordinary tools that place arguments in the
// path, the query string and a header.
const securityYAML = `store: sqlite:toolgate.db
auth:
  keys:
    - {name: support-bot, key: ` + supportKey + `}
    - {name: other-bot, key: ` + otherKey + `}
    - name: pinned-bot
      key: ` + pinnedKey + `
      principal: {id: cust_7, permissions: ["refunds:write", "orders:read"], limits: {max_refund_paise: 500000, max_items: 3}, attrs: {tier: gold}}
dependencies:
  shop: {base_url: "RECORDER", breaker: {threshold: 2, cooldown: 10m}}
tools:
  find_orders:
    description: The open orders of one customer.
    dependency: shop
    request: {method: GET, path: "/orders?customer={customer}&status=open"}
    effect: read
    input_schema: {type: object, required: [customer], properties: {customer: {type: string}}, additionalProperties: false}
  list_refunds:
    description: The refunds of one order.
    dependency: shop
    request: {method: GET, path: "/orders/{order_id}/refunds"}
    effect: read
    input_schema: {type: object, required: [order_id], properties: {order_id: {type: string}}, additionalProperties: false}
  tag_order:
    description: Tag an order.
    dependency: shop
    request: {method: POST, path: "/tags"}
    effect: write
    input_schema: {type: object, required: [order_id, tag], properties: {order_id: {type: string}, tag: {type: string}}, additionalProperties: false}
    idempotency: {key: "tag:{order_id}:{tag}:{run_id}", header: Idempotency-Key}
    retry: {max_attempts: 4, base: 1ms, cap: 1ms}
  note_order:
    description: Note something on an order, once per order and text.
    dependency: shop
    request: {method: POST, path: "/notes"}
    effect: write
    input_schema: {type: object, required: [order_id, text], properties: {order_id: {type: string}, text: {type: string}}, additionalProperties: false}
    idempotency: {key: "note:{order_id}:{text}", header: Idempotency-Key}
  get_profile:
    description: A customer's profile, kept in the run's state.
    dependency: shop
    request: {method: GET, path: "/profile"}
    effect: read
    input_schema: {type: object, properties: {size: {type: string}}}
    state: {profile: "result"}
  odd_read:
    description: A read whose answer is odd.
    dependency: shop
    request: {method: GET, path: "/odd/{kind}"}
    effect: read
    input_schema: {type: object, required: [kind], properties: {kind: {type: string}}}
`

// securitySuite is a server of securityYAML in front of a recorder, with
// run "r1" of support-bot.
func securitySuite(t *testing.T) (*proc, *recorder) {
	t.Helper()
	rec := startRecorder(t)
	srv := startServe(t, strings.ReplaceAll(securityYAML, "RECORDER", rec.srv.URL))
	if a := srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	return srv, rec
}

// checkIntact fails unless the server is healthy and run r1 of
// support-bot has exactly rows rows, each with its observation.
func checkIntact(t *testing.T, srv *proc, run, key string, rows int) {
	t.Helper()
	if a := srv.get("/healthz", ""); a.status != http.StatusOK {
		t.Fatalf("healthz: %d %s", a.status, a.body)
	}
	var doc struct {
		Step    int64 `json:"step"`
		History []struct {
			Observation string `json:"observation"`
		} `json:"history"`
	}
	a := srv.get("/v1/runs/"+run, key)
	if a.status != http.StatusOK {
		t.Fatalf("run %s: %d %s", run, a.status, a.body)
	}
	a.decode(t, &doc)
	if doc.Step != int64(rows) || len(doc.History) != rows {
		t.Fatalf("run %s: step %d, %d rows; want %d", run, doc.Step, len(doc.History), rows)
	}
	for i, h := range doc.History {
		if h.Observation == "" {
			t.Errorf("row %d has no observation", i)
		}
	}
}

// A value placed in the query string of a path template stays the one
// parameter the template names: the model cannot override the template's
// fixed parameters or add others.
func TestQueryInjectionThroughPathTemplate(t *testing.T) {
	srv, rec := securitySuite(t)
	const hostile = "c1&status=all&admin=true#x+y =z"
	args, _ := json.Marshal(map[string]string{"customer": hostile})
	res := srv.call("r1", supportKey, "find_orders", string(args))
	if !res.OK {
		t.Fatalf("%s: %s", res.Code(), res.Observation)
	}
	seen := rec.requests()
	if len(seen) != 1 {
		t.Fatalf("the dependency got %d requests", len(seen))
	}
	q, err := url.ParseQuery(seen[0].rawQuery)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"customer": {hostile}, "status": {"open"}}
	if len(q) != len(want) || q.Get("customer") != hostile || len(q["status"]) != 1 || q.Get("status") != "open" {
		t.Fatalf("the dependency got the query %q = %v, want %v", seen[0].rawQuery, q, want)
	}
	checkIntact(t, srv, "r1", supportKey, 1)
}

// A path argument may not turn its segment into ".", ".." or an empty
// one: the call is refused invalid_argument and nothing is sent.
func TestDotSegmentsRefused(t *testing.T) {
	srv, rec := securitySuite(t)
	for i, id := range []string{"..", ".", ""} {
		res := srv.call("r1", supportKey, "list_refunds", `{"order_id":"`+id+`"}`)
		if res.Code() != types.CodeInvalidArgument || res.Meta.SideEffect != types.SideEffectNone || !strings.Contains(res.Error.Message, `"order_id"`) {
			t.Fatalf("order_id %q: %s side=%s %q", id, res.Code(), res.Meta.SideEffect, res.Observation)
		}
		if seen := rec.requests(); len(seen) != 0 {
			t.Fatalf("order_id %q: the dependency was sent %+v", id, seen)
		}
		checkIntact(t, srv, "r1", supportKey, i+1)
	}
	// Dots inside a value are no dot segment.
	if res := srv.call("r1", supportKey, "list_refunds", `{"order_id":"...x/../y"}`); !res.OK {
		t.Fatalf("%s: %s", res.Code(), res.Observation)
	}
	if seen := rec.requests(); len(seen) != 1 || seen[0].escapedPath != "/orders/...x%2F..%2Fy/refunds" {
		t.Fatalf("the dependency was sent %+v", seen)
	}
}

// A header value with control characters is refused invalid_argument
// naming the argument; it is never a dependency failure, so it neither is
// retried nor opens the breaker for everyone else.
func TestBadHeaderValueNeverTripsTheBreaker(t *testing.T) {
	srv, rec := securitySuite(t)
	for i := range 5 {
		res := srv.call("r1", supportKey, "tag_order", `{"order_id":"o1","tag":"x\r\nX-Admin: 1"}`)
		if res.Code() != types.CodeInvalidArgument || res.Meta.SideEffect != types.SideEffectNone || res.Meta.Attempts != 0 ||
			!strings.Contains(res.Error.Message, `"tag"`) {
			t.Fatalf("call %d: %s side=%s attempts=%d %q", i, res.Code(), res.Meta.SideEffect, res.Meta.Attempts, res.Observation)
		}
	}
	if seen := rec.requests(); len(seen) != 0 {
		t.Fatalf("the dependency was sent %d requests", len(seen))
	}
	// The dependency is healthy and its breaker closed: other calls go through.
	res := srv.call("r1", supportKey, "tag_order", `{"order_id":"o1","tag":"gift"}`)
	if !res.OK {
		t.Fatalf("%s: %s", res.Code(), res.Observation)
	}
	if seen := rec.requests(); len(seen) != 1 || seen[0].header.Get("Idempotency-Key") != "support-bot/tag:o1:gift:r1" {
		t.Fatalf("the dependency was sent %+v", seen)
	}
	checkIntact(t, srv, "r1", supportKey, 6)
}

// Without keys the server answers only requests to a loopback Host, so a
// web page cannot reach it through DNS rebinding; nothing is created.
func TestDNSRebindingRefusedWithoutKeys(t *testing.T) {
	rec := startRecorder(t)
	cfg := strings.ReplaceAll(securityYAML[:strings.Index(securityYAML, "auth:")]+securityYAML[strings.Index(securityYAML, "dependencies:"):], "RECORDER", rec.srv.URL)
	srv := startServe(t, cfg)
	port := srv.base[strings.LastIndex(srv.base, ":")+1:]
	send := func(host, method, path, body string) *answer {
		t.Helper()
		hr, err := http.NewRequest(method, srv.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Host = host
		if body != "" {
			hr.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return &answer{status: resp.StatusCode, header: resp.Header, body: b}
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "10.1.2.3:" + port, "localhost.evil.example:" + port} {
		if a := send(host, "POST", "/v1/runs", `{"run_id":"rebound","principal":{"id":"x"}}`); a.status != http.StatusForbidden || !strings.Contains(string(a.body), `"forbidden"`) {
			t.Fatalf("Host %s: %d %s", host, a.status, a.body)
		}
		if a := send(host, "GET", "/", ""); a.status != http.StatusForbidden {
			t.Fatalf("Host %s, dashboard: %d", host, a.status)
		}
	}
	if a := srv.get("/v1/runs/rebound", ""); a.status != http.StatusNotFound {
		t.Fatalf("the rebound request made a run: %d %s", a.status, a.body)
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port} {
		if a := send(host, "POST", "/v1/runs", `{"principal":{"id":"x"}}`); a.status != http.StatusCreated {
			t.Fatalf("Host %s: %d %s", host, a.status, a.body)
		}
	}
	if a := srv.get("/healthz", ""); a.status != http.StatusOK {
		t.Fatalf("healthz: %d", a.status)
	}
}

// Nothing a caller sends or a dependency answers makes the server keep
// unbounded data: a huge tool name is refused; a state update past
// max_state_bytes is not applied, while the call's own outcome stands and
// its observation says so.
func TestSizesBounded(t *testing.T) {
	srv, rec := securitySuite(t)
	huge := strings.Repeat("t", 900_000)
	if a := srv.post("/v1/runs/r1/calls", supportKey, `{"tool":"`+huge+`","args":{}}`); a.status != http.StatusBadRequest || len(a.body) > 4096 ||
		!strings.Contains(string(a.body), "tool") {
		t.Fatalf("a 900 KB tool name: %d, %d bytes: %.300s", a.status, len(a.body), a.body)
	}
	checkIntact(t, srv, "r1", supportKey, 0)

	rec.mu.Lock()
	rec.answer = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("size") == "big" {
			_, _ = w.Write([]byte(`{"notes":"` + strings.Repeat("n", 1_500_000) + `"}`))
			return
		}
		_, _ = w.Write([]byte(`{"tier":"gold"}`))
	}
	rec.mu.Unlock()
	res := srv.call("r1", supportKey, "get_profile", `{"size":"big"}`)
	if !res.OK || len(res.Data) < 1_500_000 || !strings.Contains(res.Observation, "max_state_bytes") {
		t.Fatalf("%s, %d bytes of data: %q", res.Code(), len(res.Data), res.Observation)
	}
	small := srv.call("r1", supportKey, "get_profile", `{"size":"small"}`)
	if !small.OK || strings.Contains(small.Observation, "max_state_bytes") {
		t.Fatalf("%s: %q", small.Code(), small.Observation)
	}
	var doc struct {
		State   json.RawMessage `json:"state"`
		History []struct {
			StatePatch json.RawMessage `json:"state_patch"`
		} `json:"history"`
	}
	srv.get("/v1/runs/r1", supportKey).decode(t, &doc)
	if string(doc.State) != `{"profile":{"tier":"gold"}}` || len(doc.History) != 2 || (doc.History[0].StatePatch != nil && string(doc.History[0].StatePatch) != "null") {
		t.Fatalf("state %.200s, history %+v", doc.State, doc.History)
	}
	checkIntact(t, srv, "r1", supportKey, 2)
}

// The dashboard cannot be framed by another origin.
func TestDashboardNotFramable(t *testing.T) {
	srv, _ := securitySuite(t)
	for _, path := range []string{"/", "/runs/r1", "/assets/app.js"} {
		a := srv.get(path, "")
		if a.status != http.StatusOK || a.header.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("GET %s: %d, X-Frame-Options %q", path, a.status, a.header.Get("X-Frame-Options"))
		}
	}
	if csp := srv.get("/", "").header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}
}

// An answer that will be the same on a repeat (a redirect, one too large)
// is not advised as worth a retry; one nested 10,000 deep does not go raw
// into data, where a client's JSON decoder would recurse that deep.
func TestOddAnswers(t *testing.T) {
	srv, rec := securitySuite(t)
	deep := strings.Repeat("[", 10000) + "1" + strings.Repeat("]", 10000)
	rec.mu.Lock()
	rec.answer = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/odd/moved":
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(http.StatusMovedPermanently)
		case "/odd/huge":
			_, _ = w.Write([]byte(`{"blob":"` + strings.Repeat("h", 9<<20) + `"}`))
		case "/odd/deep":
			_, _ = w.Write([]byte(deep))
		}
	}
	rec.mu.Unlock()
	for i, kind := range []string{"moved", "huge"} {
		res := srv.call("r1", supportKey, "odd_read", `{"kind":"`+kind+`"}`)
		if res.Code() != types.CodeUpstreamError || res.Meta.Next == types.NextRetry || res.Meta.SideEffect != types.SideEffectNone ||
			strings.Contains(res.Observation, "safe to try again") {
			t.Fatalf("%s: %s next=%s side=%s %q", kind, res.Code(), res.Meta.Next, res.Meta.SideEffect, res.Observation)
		}
		checkIntact(t, srv, "r1", supportKey, i+1)
	}
	res := srv.call("r1", supportKey, "odd_read", `{"kind":"deep"}`)
	var text string
	if !res.OK || json.Unmarshal(res.Data, &text) != nil || text != deep || res.Meta.Omitted == nil || res.Meta.Omitted.Depth != 10000 {
		t.Fatalf("%s omitted=%+v data %.80s", res.Code(), res.Meta.Omitted, res.Data)
	}
	checkIntact(t, srv, "r1", supportKey, 3)
}
