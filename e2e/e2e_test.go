package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
	"github.com/toolgate/toolgate/types"
)

// The bearer keys of the suite's server.
const (
	supportKey = "support-bot-key-0123456789"
	otherKey   = "other-bot-key-01234567890"
)

// configYAML is the suite's toolgate.yaml: the refunds fixture, plus one
// tool per failure mode of the provider.
var configYAML = refunds.Config("PROVIDER", configOptions...)

// configOptions make configYAML of the refunds fixture.
var configOptions = []refunds.Option{
	server("sqlite:toolgate.db", "{name: support-bot, key: "+supportKey+"}", "{name: other-bot, key: "+otherKey+"}"),
	refunds.Set("dependencies.payments.breaker", "{threshold: 100}"),
	refunds.Add("dependencies", `flaky: {base_url: "PROVIDER", breaker: {threshold: 100}}
dead: {base_url: "DEAD", breaker: {threshold: 1, cooldown: 10m}}
`),
	refunds.Set("tools.get_order.retry", "{max_attempts: 1}"),
	refunds.Set("tools.list_refunds.retry", "{max_attempts: 1}"),
	refunds.Delete("tools.issue_refund.verify"),
	refunds.Add("tools", `refund_lost:
  description: A refund whose answer is lost and which never happened.
  dependency: flaky
  request: {method: POST, path: /lost}
  effect: write
  input_schema: {type: object, required: [order_id, amount_paise], properties: {order_id: {type: string}, amount_paise: {type: integer}}}
  timeout: {connect: 1s, read: 300ms}
  retry: {max_attempts: 1}
  verify: {lookup: list_refunds, args: {order_id: "args.order_id"}, found: "result.refunds.exists(r, r.amount_paise == args.amount_paise)"}
refund_unverified:
  description: A refund whose answer is lost, with no way to check.
  dependency: flaky
  request: {method: POST, path: /lost}
  effect: write
  input_schema: {type: object, properties: {order_id: {type: string}, amount_paise: {type: integer}}}
  timeout: {connect: 1s, read: 300ms}
  retry: {max_attempts: 1}
refund_slow_answer:
  description: A refund that is made but whose answer never comes.
  dependency: flaky
  request: {method: POST, path: /slow-refunds}
  effect: write
  input_schema: {type: object, required: [order_id, amount_paise], properties: {order_id: {type: string}, amount_paise: {type: integer}}}
  timeout: {connect: 1s, read: 300ms}
  retry: {max_attempts: 1}
  verify:
    lookup: list_refunds
    args: {order_id: "args.order_id"}
    found: "result.refunds.exists(r, r.amount_paise == args.amount_paise)"
    result: "result.refunds.filter(r, r.amount_paise == args.amount_paise)[0]"
slow_read:
  description: A read that never answers.
  dependency: flaky
  request: {method: GET, path: /hang}
  effect: read
  timeout: {connect: 1s, read: 300ms}
  retry: {max_attempts: 1}
busy_read:
  description: A read the provider rate-limits.
  dependency: flaky
  request: {method: GET, path: /status/429}
  effect: read
  retry: {max_attempts: 1}
broken_read:
  description: A read the provider fails.
  dependency: flaky
  request: {method: GET, path: /status/500}
  effect: read
  retry: {max_attempts: 1}
refused_write:
  description: A write the provider refuses.
  dependency: flaky
  request: {method: POST, path: /status/422}
  effect: write
  retry: {max_attempts: 1}
dead_read:
  description: A read of a provider that is down.
  dependency: dead
  request: {method: GET, path: /anything}
  effect: read
  retry: {max_attempts: 1}
`),
}

// suite is a server of configYAML against a fresh provider.
func suite(t *testing.T) (*proc, *provider) {
	t.Helper()
	prov := startProvider(t)
	cfg := strings.NewReplacer("PROVIDER", prov.URL(), "DEAD", deadAddress(t)).Replace(configYAML)
	return startServe(t, cfg), prov
}

// call is one tool call over HTTP; it must answer 200 with an envelope.
func (p *proc) call(runID, key, tool, args string) *types.Result {
	p.t.Helper()
	a := p.post("/v1/runs/"+runID+"/calls", key, fmt.Sprintf(`{"tool":%q,"args":%s}`, tool, args))
	if a.status != http.StatusOK {
		p.t.Fatalf("call %s: HTTP %d %s", tool, a.status, a.body)
	}
	var res types.Result
	a.decode(p.t, &res)
	return &res
}

const principal = `{"id":"cust_42","permissions":["refunds:write"],"limits":{"max_refund_paise":9007199254740993}}`

// Every endpoint, and every outcome code a call can reach over HTTP.
func TestEndToEnd(t *testing.T) {
	srv, prov := suite(t)

	a := srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":`+principal+`,"state":{"refunded_paise":0}}`)
	if a.status != http.StatusCreated || a.header.Get("Location") != "/v1/runs/r1" || !bytes.Contains(a.body, []byte(`"max_refund_paise":9007199254740993`)) {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	// A run for a principal without the refund permission.
	if a := srv.post("/v1/runs", supportKey, `{"run_id":"r-readonly","principal":{"id":"cust_42"},"state":{"refunded_paise":0}}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}
	if a := srv.post("/v1/runs", supportKey, `{"run_id":"r-short","principal":{"id":"cust_42"},"max_steps":1}`); a.status != http.StatusCreated {
		t.Fatalf("create run: %d %s", a.status, a.body)
	}

	tests := []struct {
		name     string
		run      string
		tool     string
		args     string
		code     types.Code
		side     types.SideEffect
		replayed bool
		verified bool
	}{
		{"success", "r1", "issue_refund", `{"order_id":"ORD-4471","amount_paise":425000,"reason":"damaged"}`, types.CodeOK, types.SideEffectCommitted, false, false},
		{"replay of a completed operation", "r1", "issue_refund", `{"order_id":"ORD-4471","amount_paise":425000,"reason":"damaged"}`, types.CodeOK, types.SideEffectCommitted, true, false},
		{"idempotency conflict", "r1", "issue_refund", `{"order_id":"ORD-4471","amount_paise":425000,"reason":"late"}`, types.CodeIdempotencyConflict, types.SideEffectNone, false, false},
		{"unknown tool", "r1", "issue_refnd", `{}`, types.CodeUnknownTool, types.SideEffectNone, false, false},
		{"missing arguments", "r1", "issue_refund", `{"order_id":"ORD-4471"}`, types.CodeMissingArguments, types.SideEffectNone, false, false},
		{"unknown arguments", "r1", "issue_refund", `{"order_id":"ORD-4471","amount_paise":1,"force":true}`, types.CodeUnknownArguments, types.SideEffectNone, false, false},
		{"wrong type", "r1", "issue_refund", `{"order_id":"ORD-4471","amount_paise":"100"}`, types.CodeWrongType, types.SideEffectNone, false, false},
		{"invalid argument", "r1", "issue_refund", `{"order_id":"X-4471","amount_paise":100}`, types.CodeInvalidArgument, types.SideEffectNone, false, false},
		{"forbidden", "r-readonly", "issue_refund", `{"order_id":"ORD-4471","amount_paise":100}`, types.CodeForbidden, types.SideEffectNone, false, false},
		{"rule code", "r1", "issue_refund", `{"order_id":"ORD-4471","amount_paise":9007199254740994}`, "over_limit", types.SideEffectNone, false, false},
		{"not owner", "r1", "issue_refund", `{"order_id":"ORD-9999","amount_paise":100}`, types.CodeNotOwner, types.SideEffectNone, false, false},
		{"rejected", "r1", "refused_write", `{}`, types.CodeRejected, types.SideEffectNone, false, false},
		{"rate limited", "r1", "busy_read", `{}`, types.CodeRateLimited, types.SideEffectNone, false, false},
		{"upstream error", "r1", "broken_read", `{}`, types.CodeUpstreamError, types.SideEffectNone, false, false},
		{"read timeout", "r1", "slow_read", `{}`, types.CodeTimeout, types.SideEffectNone, false, false},
		{"timeout, unknown outcome", "r1", "refund_unverified", `{"order_id":"ORD-4471","amount_paise":31}`, types.CodeTimeoutUnknownOutcome, types.SideEffectUnknown, false, false},
		{"its repeat is never sent again", "r1", "refund_unverified", `{"order_id":"ORD-4471","amount_paise":31}`, types.CodeUnknownOutcome, types.SideEffectUnknown, false, false},
		{"unknown outcome, verify did not find it", "r1", "refund_lost", `{"order_id":"ORD-4471","amount_paise":777}`, types.CodeUnknownOutcome, types.SideEffectUnknown, false, false},
		{"lost answer settled by the verify read", "r1", "refund_slow_answer", `{"order_id":"ORD-1000","amount_paise":555}`, types.CodeOK, types.SideEffectCommitted, false, true},
		{"connect failed", "r1", "dead_read", `{}`, types.CodeConnectFailed, types.SideEffectNone, false, false},
		{"circuit open", "r1", "dead_read", `{}`, types.CodeCircuitOpen, types.SideEffectNone, false, false},
		{"step budget", "r-short", "get_order", `{"order_id":"ORD-4471"}`, types.CodeOK, types.SideEffectNone, false, false},
		{"step budget exhausted", "r-short", "get_order", `{"order_id":"ORD-4471"}`, types.CodeStepBudgetExhausted, types.SideEffectNone, false, false},
	}
	for _, tt := range tests {
		// Not parallel: the rows below depend on this order.
		t.Run(tt.name, func(t *testing.T) {
			res := srv.call(tt.run, supportKey, tt.tool, tt.args)
			if res.Code() != tt.code || res.Meta.SideEffect != tt.side || res.Meta.Replayed != tt.replayed || res.Meta.Verified != tt.verified {
				t.Fatalf("got %s side=%s replayed=%v verified=%v, want %s %s %v %v\n%s",
					res.Code(), res.Meta.SideEffect, res.Meta.Replayed, res.Meta.Verified, tt.code, tt.side, tt.replayed, tt.verified, res.Observation)
			}
			if res.Observation == "" || res.Meta.Next == "" || res.Meta.RunID != tt.run || res.Meta.Tool != tt.tool {
				t.Errorf("envelope incomplete: %+v", res)
			}
		})
	}
	if c := prov.Counts(); c.Refunds != 2 || c.PaidPaise != 425000+555 {
		t.Errorf("provider: %+v, want 2 refunds of 425555 paise in all", c)
	}

	// The run document: history in commit order, state, the patches.
	var doc struct {
		RunID   string         `json:"run_id"`
		Step    int64          `json:"step"`
		State   map[string]any `json:"state"`
		History []struct {
			Step        int64           `json:"step"`
			Tool        string          `json:"tool"`
			Code        types.Code      `json:"code"`
			Observation string          `json:"observation"`
			StatePatch  json.RawMessage `json:"state_patch"`
			Args        json.RawMessage `json:"args"`
		} `json:"history"`
	}
	srv.get("/v1/runs/r1", supportKey).decode(t, &doc)
	if doc.RunID != "r1" || doc.Step != 20 || len(doc.History) != 20 || doc.State["refunded_paise"] != json.Number("425000") {
		t.Fatalf("run r1: step %d, %d rows, state %v", doc.Step, len(doc.History), doc.State)
	}
	for i, h := range doc.History {
		if h.Observation == "" || len(h.Args) == 0 {
			t.Errorf("history[%d] incomplete: %+v", i, h)
		}
	}
	if h := doc.History[0]; h.Tool != "issue_refund" || h.Code != types.CodeOK || !bytes.Contains(h.StatePatch, []byte(`"refunded_paise":425000`)) {
		t.Errorf("history[0]: %+v", h)
	}

	var rep struct {
		Matches bool `json:"matches"`
		Steps   int  `json:"steps"`
	}
	srv.get("/v1/runs/r1/replay", supportKey).decode(t, &rep)
	if !rep.Matches || rep.Steps != 20 {
		t.Errorf("replay: %+v", rep)
	}

	var list struct {
		Executions []types.Execution `json:"executions"`
	}
	srv.get("/v1/executions?run=r1&limit=5", supportKey).decode(t, &list)
	if len(list.Executions) != 5 || list.Executions[0].Step != 20 || list.Executions[0].Tool != "dead_read" {
		t.Errorf("executions of r1: %d rows, first %+v", len(list.Executions), list.Executions)
	}
	srv.get("/v1/executions?tool=get_order", supportKey).decode(t, &list)
	if len(list.Executions) != 2 {
		t.Errorf("executions of get_order: %d rows", len(list.Executions))
	}
	srv.get("/v1/executions", otherKey).decode(t, &list)
	if len(list.Executions) != 0 {
		t.Errorf("another key sees %d rows of support-bot's runs", len(list.Executions))
	}

	toolsWant := map[string]string{
		"":                         `"effect": "write"`,
		"?format=openai":           `"type":"function"`,
		"?format=anthropic":        `"input_schema":{`,
		"?format=mcp":              `"annotations":{"readOnlyHint":true,"idempotentHint":true,"destructiveHint":false,"openWorldHint":true}`,
		"?format=openai-responses": `{"type":"function","name":`,
	}
	for q, want := range toolsWant {
		a := srv.get("/v1/tools"+q, otherKey)
		if a.status != 200 || !bytes.Contains(a.body, []byte(strings.ReplaceAll(want, " ", ""))) {
			t.Errorf("tools%s: %d %.300s", q, a.status, a.body)
		}
	}
	if a := srv.get("/healthz", ""); a.status != 200 {
		t.Errorf("healthz: %d %s", a.status, a.body)
	}
}

// Integers beyond 2^53 reach the provider exactly, come back exactly and
// land in the state exactly.
func TestBigIntegersExact(t *testing.T) {
	srv, prov := suite(t)
	srv.post("/v1/runs", supportKey, `{"run_id":"big","principal":`+principal+`,"state":{"refunded_paise":0}}`)
	res := srv.call("big", supportKey, "issue_refund", `{"order_id":"ORD-4471","amount_paise":9007199254740993}`)
	if !res.OK || !bytes.Contains(res.Data, []byte(`"amount_paise":9007199254740993`)) {
		t.Fatalf("%s: %s", res.Code(), res.Data)
	}
	if r := prov.Refunds(); len(r) != 1 || r[0].AmountPaise != 9007199254740993 {
		t.Fatalf("the provider got %+v", r)
	}
	a := srv.get("/v1/runs/big", supportKey)
	if !bytes.Contains(a.body, []byte(`"state":{"refund_id":"RF-99203","refunded_paise":9007199254740993}`)) {
		t.Fatalf("state: %s", a.body)
	}
}

// Bad input is answered with a 4xx envelope naming the problem; the server
// stays healthy and the run's records are untouched.
func TestBadInput(t *testing.T) {
	srv, _ := suite(t)
	srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":`+principal+`,"state":{"refunded_paise":0}}`)
	if res := srv.call("r1", supportKey, "issue_refund", `{"order_id":"ORD-4471","amount_paise":1000}`); !res.OK {
		t.Fatal(res.Observation)
	}
	before := srv.get("/v1/runs/r1", supportKey).body

	const calls = "/v1/runs/r1/calls"
	deep := strings.Repeat("[", 10000) + "1" + strings.Repeat("]", 10000)
	tests := []struct {
		name   string
		r      request
		status int
		code   types.Code
		says   string
	}{
		{"malformed JSON", request{method: "POST", path: calls, body: strings.NewReader(`{"tool":"issue_refund","args":{"order_id":`)}, 400, types.CodeBadRequest, "not valid JSON"},
		{"20 MiB body", request{method: "POST", path: calls, body: bytes.NewReader(append([]byte(`{"tool":"issue_refund","args":{"reason":"`), bytes.Repeat([]byte("x"), 20<<20)...))}, 413, types.CodeBodyTooLarge, "larger than the limit"},
		{"10,000-deep nesting", request{method: "POST", path: calls, body: strings.NewReader(`{"tool":"issue_refund","args":{"order_id":` + deep + `}}`)}, 400, types.CodeBadRequest, "nested more than 64 levels"},
		{"args not an object", request{method: "POST", path: calls, body: strings.NewReader(`{"tool":"issue_refund","args":["ORD-4471",1000]}`)}, 400, types.CodeBadRequest, `"args" must be a JSON object`},
		{"unknown fields", request{method: "POST", path: calls, body: strings.NewReader(`{"tool":"issue_refund","arguments":{},"retry":true}`)}, 400, types.CodeBadRequest, `unknown fields "arguments", "retry"`},
		{"wrong content type", request{method: "POST", path: calls, ctype: "text/plain", body: strings.NewReader(`{"tool":"get_order"}`)}, 415, types.CodeUnsupportedType, "text/plain"},
		{"non-existent run", request{method: "POST", path: "/v1/runs/r404/calls", body: strings.NewReader(`{"tool":"get_order","args":{"order_id":"ORD-4471"}}`)}, 404, types.CodeNotFound, `no run "r404"`},
		{"missing key", request{method: "POST", path: calls, key: "-", body: strings.NewReader(`{"tool":"get_order"}`)}, 401, types.CodeUnauthorized, "no API key"},
		{"wrong key", request{method: "GET", path: "/v1/runs/r1", key: "support-bot-key-0123456780"}, 401, types.CodeUnauthorized, "not one of this server's keys"},
		{"another key reads the run", request{method: "GET", path: "/v1/runs/r1", key: otherKey}, 404, types.CodeNotFound, `no run "r1"`},
		{"another key calls in the run", request{method: "POST", path: calls, key: otherKey, body: strings.NewReader(`{"tool":"get_order","args":{"order_id":"ORD-4471"}}`)}, 404, types.CodeNotFound, `no run "r1"`},
		{"another key replays the run", request{method: "GET", path: "/v1/runs/r1/replay", key: otherKey}, 404, types.CodeNotFound, `no run "r1"`},
		{"another key lists its rows", request{method: "GET", path: "/v1/executions?run=r1", key: otherKey}, 404, types.CodeNotFound, `no run "r1"`},
		{"duplicate run", request{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"run_id":"r1","principal":{"id":"x"}}`)}, 409, types.CodeRunExists, `"r1" already exists`},
		{"wrong method", request{method: "PUT", path: calls, body: strings.NewReader(`{}`)}, 405, types.CodeBadRequest, "allowed: POST"},
		{"no such endpoint", request{method: "GET", path: "/v1/nothing"}, 404, types.CodeNotFound, "no endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			switch r.key {
			case "":
				r.key = supportKey
			case "-":
				r.key = ""
			}
			a := srv.do(r)
			var res types.Result
			a.decode(t, &res)
			if a.status != tt.status || res.OK || res.Error == nil || res.Error.Code != tt.code || !strings.Contains(res.Error.Message, tt.says) {
				t.Fatalf("HTTP %d %s, want %d %s saying %q", a.status, a.body, tt.status, tt.code, tt.says)
			}
			if res.Observation == "" || res.Meta.SideEffect != types.SideEffectNone {
				t.Errorf("envelope incomplete: %s", a.body)
			}
			if tt.status == 401 && a.header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		})
	}
	if a := srv.get("/healthz", ""); a.status != 200 {
		t.Fatalf("unhealthy after bad input: %d %s", a.status, a.body)
	}
	if after := srv.get("/v1/runs/r1", supportKey).body; !bytes.Equal(before, after) {
		t.Fatalf("the run changed:\nbefore %s\nafter  %s", before, after)
	}
}

// Without keys the server refuses to listen beyond loopback.
func TestNoKeysLoopbackOnly(t *testing.T) {
	prov := startProvider(t)
	cfg := refunds.Config("PROVIDER", append(configOptions, refunds.Delete("auth"))...)
	cfg = strings.NewReplacer("PROVIDER", prov.URL(), "DEAD", deadAddress(t)).Replace(cfg)
	dir := t.TempDir()
	path := dir + "/toolgate.yaml"
	if err := writeFile(path, cfg); err != nil {
		t.Fatal(err)
	}
	out, code := runBinary(t, "serve", "--config", path, "--listen", "0.0.0.0:0")
	if code != 1 || !strings.Contains(out, "loopback") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// On loopback it serves, without auth.
	p := startServe(t, cfg)
	if a := p.post("/v1/runs", "", `{"principal":{"id":"dev"}}`); a.status != http.StatusCreated {
		t.Fatalf("dev mode: %d %s", a.status, a.body)
	}
}
