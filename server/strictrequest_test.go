package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
)

// TestPrincipalStringsBounded: a principal's id, permissions and limit
// and attr names are at most 256 bytes and hold no control character
// (they reach logs, headers and quota keys); each refusal is 400
// bad_request naming the field.
func TestPrincipalStringsBounded(t *testing.T) {
	b := setup(t, setupOpts{})
	long := strings.Repeat("a", 257)
	for _, tc := range []struct {
		name, principal, want string
	}{
		{"id too long", `{"id":"` + long + `"}`, "principal.id is 257 bytes long; at most 256 are allowed"},
		{"id with CRLF", `{"id":"cust_42\r\nX-Injected: 1"}`, "principal.id holds the character U+000D at byte 7"},
		{"id with LF", `{"id":"cust\n42"}`, "principal.id holds the character U+000A"},
		{"id with NUL", `{"id":"cust\u000042"}`, "principal.id holds the character U+0000"},
		{"id with DEL", `{"id":"cust\u007f"}`, "principal.id holds the character U+007F"},
		{"id with C1", `{"id":"cust\u0085"}`, "principal.id holds the character U+0085"},
		{"id with tab", `{"id":"cust\t42"}`, "principal.id holds the character U+0009"},
		{"permission too long", `{"id":"c","permissions":["ok","` + long + `"]}`, "principal.permissions[1] is 257 bytes long"},
		{"permission with CR", `{"id":"c","permissions":["refunds:write\r"]}`, "principal.permissions[0] holds the character U+000D"},
		{"limit name with LF", `{"id":"c","limits":{"max\n":1}}`, "a name in principal.limits holds the character U+000A"},
		{"attr name too long", `{"id":"c","attrs":{"` + long + `":"x"}}`, "a name in principal.attrs is 257 bytes long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := b.post("/v1/runs", alphaKey, `{"principal":`+tc.principal+`}`)
			res := resp.envelope(t)
			if resp.status != http.StatusBadRequest || res.Error == nil || res.Error.Code != "bad_request" ||
				!strings.Contains(res.Error.Message, tc.want) {
				t.Fatalf("got %d %s, want 400 bad_request saying %q", resp.status, resp.body, tc.want)
			}
			if !strings.Contains(res.Error.Message, "control characters") && !strings.Contains(res.Error.Message, "at most 256") {
				t.Fatalf("message %q does not say what is allowed", res.Error.Message)
			}
		})
	}
	// At the bound, and non-ASCII text, are accepted and kept intact.
	for _, id := range []string{strings.Repeat("b", 256), "クライアント_42", "ünïcode id with spaces"} {
		resp := b.post("/v1/runs", alphaKey, `{"principal":{"id":"`+id+`","permissions":["refunds:write"],"attrs":{"tier":"gold\nline"}}}`)
		if resp.status != http.StatusCreated {
			t.Fatalf("id %.20q: %d %s", id, resp.status, resp.body)
		}
		var doc RunDocument
		resp.decode(t, &doc)
		if doc.Principal.ID != id {
			t.Fatalf("principal id %q came back as %q", id, doc.Principal.ID)
		}
	}
}

// TestNoQueryParameters: a route that takes no query parameters refuses
// any (?_method=DELETE included) with 400 naming them and its route,
// before the handler runs; routes with parameters keep them.
func TestNoQueryParameters(t *testing.T) {
	b := setup(t, setupOpts{config: func(c *config.Config) {
		c.Auth.Keys = append(c.Auth.Keys, config.Key{Name: "ops", Key: opsKey, Approver: true})
	}})
	b.startRun(alphaKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`)
	for _, tc := range []struct {
		method, path, body, key, want string
	}{
		{"POST", "/v1/runs?_method=DELETE", `{"run_id":"r2","principal":{"id":"c"}}`, alphaKey, `unknown query parameter "_method": POST /v1/runs takes no query parameters`},
		{"POST", "/v1/runs/r1/calls?_method=GET", `{"tool":"echo","args":{"n":1}}`, alphaKey, `unknown query parameter "_method": POST /v1/runs/{run}/calls takes`},
		{"GET", "/v1/runs/r1?format=x&a=1", "", alphaKey, `unknown query parameters "a", "format" in the URL; valid: key`},
		{"GET", "/v1/runs/r1/replay?x", "", alphaKey, `unknown query parameter "x" in the URL; valid: key`},
		{"GET", "/v1/config?verbose=1", "", alphaKey, `unknown query parameter "verbose": GET /v1/config takes`},
		{"GET", "/v1/approvals/a1?_method=POST", "", opsKey, `unknown query parameter "_method": GET /v1/approvals/{id} takes`},
		{"POST", "/v1/approvals/a1?decision=approve", `{"decision":"approve"}`, opsKey, `unknown query parameter "decision": POST /v1/approvals/{id} takes`},
		{"GET", "/v1/quotas?key=alice", "", opsKey, `unknown query parameter "key": GET /v1/quotas takes`},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := req{method: tc.method, path: tc.path, key: tc.key}
			if tc.body != "" {
				r.ctype, r.body = "application/json", strings.NewReader(tc.body)
			}
			resp := b.do(r)
			res := resp.envelope(t)
			if resp.status != http.StatusBadRequest || res.Error == nil || res.Error.Code != "bad_request" ||
				!strings.Contains(res.Error.Message, tc.want) {
				t.Fatalf("got %d %s, want 400 bad_request saying %q", resp.status, resp.body, tc.want)
			}
		})
	}
	// Nothing was done: no run r2, and r1 made no call.
	if resp := b.get("/v1/runs/r2", alphaKey); resp.status != http.StatusNotFound {
		t.Fatalf("run r2 after a refused create: %d %s", resp.status, resp.body)
	}
	var doc RunDocument
	b.get("/v1/runs/r1", alphaKey).decode(t, &doc)
	if doc.Step != 0 {
		t.Fatalf("run r1 is at step %d after a refused call, want 0", doc.Step)
	}
	// Auth comes first: no key, no word about the parameters.
	if resp := b.get("/v1/config?x=1", ""); resp.status != http.StatusUnauthorized {
		t.Fatalf("no key: %d %s, want 401", resp.status, resp.body)
	}
	// Routes with parameters, the public probes, and an empty query still answer.
	for _, path := range []string{"/v1/runs?limit=2", "/v1/tools?format=openai", "/v1/executions?limit=1",
		"/v1/approvals?status=all", "/healthz?probe=1", "/v1/openapi.json?v=2", "/v1/config?", "/v1/runs/r1?&", "/v1/quotas?"} {
		key := opsKey
		if strings.HasPrefix(path, "/v1/runs/") {
			key = alphaKey
		}
		if resp := b.get(path, key); resp.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.status, resp.body)
		}
	}
}
