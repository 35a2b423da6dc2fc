package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolgate/toolgate/internal/buildinfo"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

func TestRunLifecycle(t *testing.T) {
	b := setup(t, setupOpts{})
	resp := b.post("/v1/runs", alphaKey, `{"run_id":"r1","principal":{"id":"cust_42","limits":{"max":9007199254740993},"attrs":{"tier":2}},"state":{"last":0},"max_steps":10}`)
	if resp.status != http.StatusCreated || resp.header.Get("Location") != "/v1/runs/r1" {
		t.Fatalf("create: %d %v %s", resp.status, resp.header, resp.body)
	}
	if !bytes.Contains(resp.body, []byte(`"max":9007199254740993`)) || !bytes.Contains(resp.body, []byte(`"history":[]`)) {
		t.Errorf("run document: %s", resp.body)
	}

	resp = b.post("/v1/runs/r1/calls", alphaKey, `{"tool":"echo","args":{"n":9007199254740993},"call_id":"toolu_1","usage":{"input_tokens":12,"output_tokens":3}}`)
	if resp.status != http.StatusOK {
		t.Fatalf("call: %d %s", resp.status, resp.body)
	}
	res := resp.envelope(t)
	if !res.OK || string(res.Data) != `{"n":9007199254740993}` || res.Meta.CallID != "toolu_1" || res.Meta.Step != 1 {
		t.Fatalf("call result: %s", resp.body)
	}

	// A tool failure is a 200 with ok false.
	resp = b.post("/v1/runs/r1/calls", alphaKey, `{"tool":"echo","args":{"x":1}}`)
	if res := resp.envelope(t); resp.status != http.StatusOK || res.OK || res.Code() != types.CodeUnknownArguments {
		t.Fatalf("refused call: %d %s", resp.status, resp.body)
	}

	var doc RunDocument
	b.get("/v1/runs/r1", alphaKey).decode(t, &doc)
	if doc.Step != 2 || len(doc.History) != 2 || string(doc.State) != `{"last":9007199254740993}` {
		t.Fatalf("run: %+v", doc)
	}
	h := doc.History[0]
	if h.Step != 1 || h.CallID != "toolu_1" || h.Tool != "echo" || !h.OK || h.Code != types.CodeOK ||
		string(h.Args) != `{"n":9007199254740993}` || h.Observation == "" || string(h.StatePatch) != `{"last":9007199254740993}` {
		t.Errorf("history[0]: %+v", h)
	}
	if h := doc.History[1]; h.OK || h.Code != types.CodeUnknownArguments || string(h.StatePatch) != "null" {
		t.Errorf("history[1]: %+v", h)
	}

	var rep struct {
		State   json.RawMessage `json:"state"`
		Matches bool            `json:"matches"`
	}
	b.get("/v1/runs/r1/replay", alphaKey).decode(t, &rep)
	if !rep.Matches || string(rep.State) != `{"last":9007199254740993}` {
		t.Errorf("replay: %+v", rep)
	}

	var list ExecutionList
	b.get("/v1/executions?run=r1&limit=1", alphaKey).decode(t, &list)
	if len(list.Executions) != 1 || list.Executions[0].Step != 2 {
		t.Errorf("executions newest first, limit 1: %+v", list.Executions)
	}
	b.get("/v1/executions?tool=echo", alphaKey).decode(t, &list)
	if len(list.Executions) != 2 || list.Executions[0].Step != 2 || list.Executions[1].Step != 1 {
		t.Errorf("executions by tool: %d rows", len(list.Executions))
	}
	if resp := b.get("/healthz", ""); resp.status != http.StatusOK || string(bytes.TrimSpace(resp.body)) != `{"ok":true,"config_version":"`+b.gw.Config().Version+`","version":"`+buildinfo.Version()+`","keys_required":true}` {
		t.Errorf("healthz: %d %s", resp.status, resp.body)
	}
}

func TestToolsFormats(t *testing.T) {
	b := setup(t, setupOpts{})
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{`{"tools":[{"name":"echo","description":"Answers its arguments.","effect":"read","input_schema":`}},
		{"?format=openai", []string{`[{"type":"function","function":{"name":"echo","description":"Answers its arguments.","parameters":{`}},
		{"?format=anthropic", []string{`[{"name":"echo","description":"Answers its arguments.","input_schema":{`}},
		{"?format=mcp", []string{`"inputSchema":{`, `"annotations":{"readOnlyHint":true,"idempotentHint":true,"destructiveHint":false}`,
			`"annotations":{"readOnlyHint":false,"idempotentHint":false,"destructiveHint":true}`}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp := b.get("/v1/tools"+tt.query, betaKey)
			if resp.status != http.StatusOK {
				t.Fatalf("%d %s", resp.status, resp.body)
			}
			for _, w := range tt.want {
				if !bytes.Contains(resp.body, []byte(w)) {
					t.Errorf("missing %s in\n%s", w, resp.body)
				}
			}
		})
	}
}

// Every gateway refusal: the right status, code and a message naming the
// problem; the server stays healthy and the run is unchanged.
func TestGatewayErrors(t *testing.T) {
	b := setup(t, setupOpts{})
	b.startRun(alphaKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`)
	b.startRun(betaKey, `{"run_id":"rb","principal":{"id":"cust_7"}}`)
	b.post("/v1/runs/r1/calls", alphaKey, `{"tool":"echo","args":{"n":1}}`)
	before := b.get("/v1/runs/r1", alphaKey).body

	const calls = "/v1/runs/r1/calls"
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	tests := []struct {
		name   string
		r      req
		status int
		code   types.Code
		says   string
	}{
		{"malformed JSON", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo",`)}, 400, types.CodeBadRequest, "not valid JSON"},
		{"bad token", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":echo}`)}, 400, types.CodeBadRequest, "invalid character"},
		{"empty body", req{method: "POST", path: calls, body: strings.NewReader(``)}, 400, types.CodeBadRequest, "empty"},
		{"body not an object", req{method: "POST", path: calls, body: strings.NewReader(`["echo"]`)}, 400, types.CodeBadRequest, "must be a JSON object, got an array"},
		{"trailing data", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo"} {}`)}, 400, types.CodeBadRequest, "data after"},
		{"deep nesting", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","args":{"a":` + deep + `}}`)}, 400, types.CodeBadRequest, "nested more than 64 levels"},
		{"brackets in strings do not count", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","args":{"s":"` + strings.Repeat("[{", 100) + `\"[["}}`)}, 200, "", ""},
		{"unknown fields named", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","arguments":{},"force":true}`)}, 400, types.CodeBadRequest, `unknown fields "arguments", "force"`},
		{"repeated field", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","tool":"hold"}`)}, 400, types.CodeBadRequest, `"tool" appears twice`},
		{"args an array", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","args":[1]}`)}, 400, types.CodeBadRequest, `"args" must be a JSON object`},
		{"args a string", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","args":"{\"n\":1}"}`)}, 400, types.CodeBadRequest, "got a string"},
		{"args null is none", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","args":null}`)}, 200, "", ""},
		{"tool missing", req{method: "POST", path: calls, body: strings.NewReader(`{"args":{}}`)}, 400, types.CodeBadRequest, `"tool" is required`},
		{"tool a number", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":7}`)}, 400, types.CodeBadRequest, `"tool" must be a string`},
		{"call_id too long", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","call_id":"` + strings.Repeat("x", 300) + `"}`)}, 400, types.CodeBadRequest, "call_id"},
		{"usage negative", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","usage":{"input_tokens":-1}}`)}, 400, types.CodeBadRequest, "input_tokens"},
		{"usage unknown field", req{method: "POST", path: calls, body: strings.NewReader(`{"tool":"echo","usage":{"tokens":1}}`)}, 400, types.CodeBadRequest, `unknown field "tokens"`},
		{"wrong content type", req{method: "POST", path: calls, ctype: "text/plain", body: strings.NewReader(`{"tool":"echo"}`)}, 415, types.CodeUnsupportedType, "text/plain"},
		{"form content type", req{method: "POST", path: calls, ctype: "application/x-www-form-urlencoded", body: strings.NewReader(`tool=echo`)}, 415, types.CodeUnsupportedType, "application/json"},
		{"no content type", req{method: "POST", path: calls, ctype: "-", body: strings.NewReader(`{"tool":"echo"}`)}, 415, types.CodeUnsupportedType, "no Content-Type"},
		{"charset allowed", req{method: "POST", path: calls, ctype: "application/json; charset=utf-8", body: strings.NewReader(`{"tool":"echo"}`)}, 200, "", ""},
		{"body too large", req{method: "POST", path: calls, body: bytes.NewReader(bytes.Repeat([]byte(" "), 2<<20))}, 413, types.CodeBodyTooLarge, "1048576 bytes"},
		{"body too large, no length", req{method: "POST", path: calls, body: io.MultiReader(strings.NewReader(`{"tool":"echo","args":{"s":"`), strings.NewReader(strings.Repeat("x", 2<<20)))}, 413, types.CodeBodyTooLarge, "max_body_bytes"},
		{"unknown run", req{method: "POST", path: "/v1/runs/nope/calls", body: strings.NewReader(`{"tool":"echo"}`)}, 404, types.CodeNotFound, `no run "nope"`},
		{"another key's run", req{method: "POST", path: "/v1/runs/rb/calls", body: strings.NewReader(`{"tool":"echo"}`)}, 404, types.CodeNotFound, `no run "rb"`},
		{"another key's run, read", req{method: "GET", path: "/v1/runs/rb"}, 404, types.CodeNotFound, `no run "rb"`},
		{"another key's replay", req{method: "GET", path: "/v1/runs/rb/replay"}, 404, types.CodeNotFound, `no run "rb"`},
		{"another key's executions", req{method: "GET", path: "/v1/executions?run=rb"}, 404, types.CodeNotFound, `no run "rb"`},
		{"missing key", req{method: "GET", path: "/v1/runs/r1", key: "-"}, 401, types.CodeUnauthorized, "Authorization: Bearer"},
		{"wrong key", req{method: "GET", path: "/v1/runs/r1", key: "not-a-key-at-all-xx"}, 401, types.CodeUnauthorized, "not one of this server's keys"},
		{"basic auth", req{method: "GET", path: "/v1/tools", key: "-", header: map[string]string{"Authorization": "Basic YTpi"}}, 401, types.CodeUnauthorized, "Bearer <key>"},
		{"method not allowed", req{method: "GET", path: calls}, 405, types.CodeBadRequest, "allowed: POST"},
		{"method not allowed on runs", req{method: "DELETE", path: "/v1/runs/r1"}, 405, types.CodeBadRequest, "allowed: GET"},
		{"no such endpoint", req{method: "GET", path: "/v2/things"}, 404, types.CodeNotFound, "no endpoint GET /v2/things"},
		{"duplicate run", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"run_id":"r1","principal":{"id":"x"}}`)}, 409, types.CodeRunExists, `"r1" already exists`},
		{"invalid run id", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"run_id":"a/b","principal":{"id":"x"}}`)}, 400, types.CodeBadRequest, "not a valid run id"},
		{"principal missing", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"run_id":"r9"}`)}, 400, types.CodeBadRequest, `"principal" is required`},
		{"principal id missing", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"principal":{"permissions":["a"]}}`)}, 400, types.CodeBadRequest, "principal.id is required"},
		{"principal unknown field", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"principal":{"id":"x","permisions":["a"]}}`)}, 400, types.CodeBadRequest, `no field "permisions"`},
		{"principal wrong type", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"principal":{"id":"x","permissions":"a"}}`)}, 400, types.CodeBadRequest, "principal.permissions must be an array"},
		{"state not an object", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"principal":{"id":"x"},"state":[1]}`)}, 400, types.CodeBadRequest, `"state" must be a JSON object`},
		{"max_steps negative", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"principal":{"id":"x"},"max_steps":-1}`)}, 400, types.CodeBadRequest, `"max_steps" must be a whole number`},
		{"max_steps fraction", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"principal":{"id":"x"},"max_steps":1.5}`)}, 400, types.CodeBadRequest, "1.5"},
		{"run unknown field", req{method: "POST", path: "/v1/runs", body: strings.NewReader(`{"principal":{"id":"x"},"owner":"beta"}`)}, 400, types.CodeBadRequest, `unknown field "owner"`},
		{"limit too big", req{method: "GET", path: "/v1/executions?limit=100000"}, 400, types.CodeBadRequest, "limit"},
		{"unknown query parameter", req{method: "GET", path: "/v1/executions?runs=r1"}, 400, types.CodeBadRequest, `unknown query parameter "runs"`},
		{"unknown format", req{method: "GET", path: "/v1/tools?format=gemini"}, 400, types.CodeBadRequest, `unknown format "gemini"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			switch r.key {
			case "":
				r.key = alphaKey
			case "-":
				r.key = ""
			}
			switch r.ctype {
			case "":
				if r.method == "POST" {
					r.ctype = "application/json"
				}
			case "-":
				r.ctype = ""
			}
			resp := b.do(r)
			if resp.status != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.status, tt.status, resp.body)
			}
			if tt.status == 200 {
				return
			}
			res := resp.envelope(t)
			if res.OK || res.Error == nil || res.Error.Code != tt.code || !strings.Contains(res.Error.Message, tt.says) {
				t.Fatalf("envelope %s, want code %s saying %q", resp.body, tt.code, tt.says)
			}
			if res.Observation == "" || res.Meta.SideEffect != types.SideEffectNone || res.Meta.Next == "" || string(res.Data) != "null" {
				t.Errorf("envelope incomplete: %s", resp.body)
			}
			if resp.header.Get("Content-Type") != "application/json" {
				t.Errorf("content type %q", resp.header.Get("Content-Type"))
			}
			if tt.status == 401 && !strings.HasPrefix(resp.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: %v", resp.header)
			}
			if tt.status == 405 && resp.header.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
		})
	}
	if resp := b.get("/healthz", ""); resp.status != http.StatusOK {
		t.Fatalf("unhealthy after bad input: %d %s", resp.status, resp.body)
	}
	// The three 200 cases above were real calls; everything else left the
	// run as it was.
	var doc RunDocument
	b.get("/v1/runs/r1", alphaKey).decode(t, &doc)
	if len(doc.History) != 4 {
		t.Fatalf("history has %d rows, want 4", len(doc.History))
	}
	var was RunDocument
	(&response{body: before}).decode(t, &was)
	if fmt.Sprint(was.History[0]) != fmt.Sprint(doc.History[0]) || string(was.State) != string(doc.State) {
		t.Errorf("the first record changed:\n%+v\n%+v", was.History[0], doc.History[0])
	}
}

func TestHealthzUnavailable(t *testing.T) {
	b := setup(t, setupOpts{})
	b.gw.Store().Close()
	resp := b.get("/healthz", "")
	res := resp.envelope(t)
	if resp.status != http.StatusServiceUnavailable || res.Code() != types.CodeUnavailable || resp.header.Get("Retry-After") == "" || res.Meta.Next != types.NextWait {
		t.Fatalf("%d %v %s", resp.status, resp.header, resp.body)
	}
	// A call against a closed store is 503 as well, never a 500.
	resp = b.post("/v1/runs", alphaKey, `{"principal":{"id":"x"}}`)
	if resp.status != http.StatusServiceUnavailable {
		t.Fatalf("create run on a closed store: %d %s", resp.status, resp.body)
	}
	if !strings.Contains(b.logs.text(), "ERROR request refused") {
		t.Errorf("5xx not logged at error:\n%s", b.logs.text())
	}
}

func TestPanicIsInternalErrorWithoutDetails(t *testing.T) {
	b := setup(t, setupOpts{mounts: []Mount{{Pattern: "GET /v1/explode", Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret-token-123")
	})}}})
	resp := b.get("/v1/explode", alphaKey)
	res := resp.envelope(t)
	if resp.status != http.StatusInternalServerError || res.Code() != types.CodeInternalError {
		t.Fatalf("%d %s", resp.status, resp.body)
	}
	if bytes.Contains(resp.body, []byte("secret-token-123")) || bytes.Contains(resp.body, []byte("goroutine")) {
		t.Errorf("panic details in the answer: %s", resp.body)
	}
	if !strings.Contains(b.logs.text(), "secret-token-123") {
		t.Errorf("panic not logged")
	}
}

func TestMounts(t *testing.T) {
	seen := make(chan string, 1)
	b := setup(t, setupOpts{mounts: []Mount{
		{Pattern: "GET /metrics", Public: true, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "up 1\n")
		})},
		{Pattern: "GET /v1/whoami", Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen <- KeyName(r.Context())
		})},
	}})
	if resp := b.get("/metrics", ""); resp.status != 200 || string(resp.body) != "up 1\n" {
		t.Errorf("public mount: %d %s", resp.status, resp.body)
	}
	if resp := b.get("/v1/whoami", ""); resp.status != 401 {
		t.Errorf("private mount without a key: %d", resp.status)
	}
	b.get("/v1/whoami", betaKey)
	if got := <-seen; got != "beta" {
		t.Errorf("KeyName = %q, want beta", got)
	}

	tests := []struct {
		name  string
		mount Mount
	}{
		{"conflicts with a route", Mount{Pattern: "POST /v1/runs", Handler: http.NotFoundHandler()}},
		{"invalid pattern", Mount{Pattern: "GET /v1/{", Handler: http.NotFoundHandler()}},
		{"no handler", Mount{Pattern: "GET /v1/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(Options{Gateway: b.gw, Mounts: []Mount{tt.mount}}); err == nil {
				t.Fatal("New accepted it")
			}
		})
	}
}

// A key sees the rows of its own runs only; without keys every run is
// visible.
func TestExecutionsByOwner(t *testing.T) {
	b := setup(t, setupOpts{})
	b.startRun(alphaKey, `{"run_id":"ra","principal":{"id":"a"}}`)
	b.startRun(betaKey, `{"run_id":"rb","principal":{"id":"b"}}`)
	for i := range 5 {
		b.post("/v1/runs/ra/calls", alphaKey, fmt.Sprintf(`{"tool":"echo","args":{"n":%d}}`, i))
		b.post("/v1/runs/rb/calls", betaKey, fmt.Sprintf(`{"tool":"echo","args":{"n":%d}}`, i))
	}
	tests := []struct {
		key, query string
		want       int
		run        string
	}{
		{alphaKey, "", 5, "ra"},
		{betaKey, "?limit=3", 3, "rb"},
		{alphaKey, "?run=ra&limit=2", 2, "ra"},
		{betaKey, "?tool=echo", 5, "rb"},
		{betaKey, "?tool=hold", 0, ""},
	}
	for _, tt := range tests {
		var list ExecutionList
		b.get("/v1/executions"+tt.query, tt.key).decode(t, &list)
		if len(list.Executions) != tt.want {
			t.Errorf("%s%s: %d rows, want %d", tt.key[:5], tt.query, len(list.Executions), tt.want)
		}
		for _, row := range list.Executions {
			if row.RunID != tt.run {
				t.Errorf("%s%s: row of run %s", tt.key[:5], tt.query, row.RunID)
			}
		}
	}
}

func TestDevModeSeesEveryRun(t *testing.T) {
	b := setup(t, setupOpts{noKeys: true})
	id := b.startRun("", `{"principal":{"id":"a"}}`)
	if !strings.HasPrefix(id, "run_") {
		t.Errorf("generated run id %q", id)
	}
	b.post("/v1/runs/"+id+"/calls", "", `{"tool":"echo"}`)
	var list ExecutionList
	b.get("/v1/executions", "").decode(t, &list)
	if len(list.Executions) != 1 || KeyName(context.Background()) != "" {
		t.Fatalf("rows: %d", len(list.Executions))
	}
}

// The whole history, not the store's default page of 100.
func TestHistoryBeyondOneHundredCalls(t *testing.T) {
	b := setup(t, setupOpts{})
	b.startRun(alphaKey, `{"run_id":"long","principal":{"id":"a"}}`)
	for i := range 120 {
		b.post("/v1/runs/long/calls", alphaKey, fmt.Sprintf(`{"tool":"echo","args":{"n":%d}}`, i))
	}
	var doc RunDocument
	b.get("/v1/runs/long", alphaKey).decode(t, &doc)
	if len(doc.History) != 120 || doc.History[119].Step != 120 {
		t.Fatalf("history: %d rows", len(doc.History))
	}
	var rep struct {
		Matches bool `json:"matches"`
		Steps   int  `json:"steps"`
	}
	b.get("/v1/runs/long/replay", alphaKey).decode(t, &rep)
	if !rep.Matches || rep.Steps != 120 {
		t.Fatalf("replay: %+v", rep)
	}
}

func TestKeyringMatch(t *testing.T) {
	kr, err := newKeyring([]config.Key{{Name: "a", Key: "first-key-000000"}, {Name: "b", Key: "second-key-00000"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		given string
		name  string
		ok    bool
	}{
		{"first-key-000000", "a", true},
		{"second-key-00000", "b", true},
		{"second-key-0000", "", false},
		{"", "", false},
		{"first-key-000000 ", "", false},
	}
	for _, tt := range tests {
		if name, ok := kr.match(tt.given); name != tt.name || ok != tt.ok {
			t.Errorf("match(%q) = %q %v, want %q %v", tt.given, name, ok, tt.name, tt.ok)
		}
	}
}

func TestCheckDepth(t *testing.T) {
	tests := []struct {
		in  string
		max int
		ok  bool
	}{
		{`{}`, 1, true},
		{`{"a":{}}`, 1, false},
		{`[[1],[2]]`, 2, true},
		{`"[[[[["`, 1, true},
		{`{"a":"\"[[["}`, 1, true},
		{`{"a":"\\"}`, 1, true},
		{`{"a":"\\",[{}]}`, 2, false},
		{`]]]]{[`, 2, true},
	}
	for _, tt := range tests {
		if err := checkDepth([]byte(tt.in), tt.max); (err == nil) != tt.ok {
			t.Errorf("checkDepth(%s, %d) = %v", tt.in, tt.max, err)
		}
	}
}
