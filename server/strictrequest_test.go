package server

import (
	"net/http"
	"strings"
	"testing"
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
