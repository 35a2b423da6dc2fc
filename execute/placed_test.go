package execute

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

// seen is what a test server records of the requests it got.
type seen struct {
	mu       sync.Mutex
	requests []seenRequest
}

type seenRequest struct {
	method, uri, body string
	header            http.Header
}

func (s *seen) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, seenRequest{r.Method, r.RequestURI, string(b), r.Header.Clone()})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	})
}

func (s *seen) all() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.requests...)
}

// petParams is the placement of an imported "update a pet" operation:
// PUT /stores/{storeId}/pets/{petId} with a query, a header, a body whose
// id property clashes with a query parameter.
var petParams = map[string]config.Param{
	"storeId": {In: config.InPath, Name: "storeId"},
	"petId":   {In: config.InPath, Name: "petId"},
	"id":      {In: config.InQuery, Name: "id"},
	"tags":    {In: config.InQuery, Name: "tag"},
	"trace":   {In: config.InHeader, Name: "X-Trace"},
	"name":    {In: config.InBody, Name: "name", Required: true},
	"body_id": {In: config.InBody, Name: "id", Required: true},
}

// getParams is petParams without the body: a GET of the same pet.
var getParams = func() map[string]config.Param {
	m := map[string]config.Param{}
	for k, v := range petParams {
		if v.In != config.InBody {
			m[k] = v
		}
	}
	return m
}()

func placedAttempt(base, method, path string, params map[string]config.Param, args map[string]any) *Attempt {
	a := httpAttempt(base, method, path, args)
	a.Tool.Request.Params = params
	return a
}

func TestPlacedRequest(t *testing.T) {
	tests := []struct {
		name   string
		method string
		path   string
		params map[string]config.Param
		args   map[string]any
		uri    string // "" when nothing may be sent
		body   string
		header string // X-Trace
		code   types.Code
	}{
		{"every place", "PUT", "/stores/{storeId}/pets/{petId}", petParams,
			map[string]any{"storeId": "s1", "petId": num("7"), "id": "q", "tags": []any{"a", "b"}, "trace": "t-1", "name": "Rex", "body_id": num("9007199254740993")},
			"/api/stores/s1/pets/7?id=q&tag=a&tag=b", `{"id":9007199254740993,"name":"Rex"}`, "t-1", ""},
		{"a slash stays in its segment", "GET", "/stores/{storeId}/pets/{petId}", getParams,
			map[string]any{"storeId": "a/b", "petId": "x y"},
			"/api/stores/a%2Fb/pets/x%20y", "", "", ""},
		{"query metacharacters stay one value", "GET", "/stores/{storeId}/pets/{petId}", getParams,
			map[string]any{"storeId": "s", "petId": "p", "id": "a&b=c+d#e"},
			"/api/stores/s/pets/p?id=a%26b%3Dc%2Bd%23e", "", "", ""},
		{"dot-dot segment refused", "GET", "/stores/{storeId}/pets/{petId}", getParams,
			map[string]any{"storeId": "..", "petId": "p"}, "", "", "", types.CodeInvalidArgument},
		{"dot segment refused", "GET", "/stores/{storeId}/pets/{petId}", getParams,
			map[string]any{"storeId": "s", "petId": "."}, "", "", "", types.CodeInvalidArgument},
		{"empty segment refused", "GET", "/stores/{storeId}/pets/{petId}", getParams,
			map[string]any{"storeId": "", "petId": "p"}, "", "", "", types.CodeInvalidArgument},
		{"header with CR LF refused", "GET", "/stores/{storeId}/pets/{petId}", getParams,
			map[string]any{"storeId": "s", "petId": "p", "trace": "a\r\nX-Evil: 1"}, "", "", "", types.CodeInvalidArgument},
		{"required body sent empty", "POST", "/pets", map[string]config.Param{"name": {In: config.InBody, Name: "name", Required: true}},
			map[string]any{}, "/api/pets", `{}`, "", ""},
		{"whole body", "POST", "/pets/batch", map[string]config.Param{"body": {In: config.InBody, Required: true}},
			map[string]any{"body": []any{num("1"), num("2")}}, "/api/pets/batch", `[1,2]`, "", ""},
		{"query styles from the document", "GET", "/pets", map[string]config.Param{
			"ids":    {In: config.InQuery, Name: "ids", Style: config.StyleForm},
			"tags":   {In: config.InQuery, Name: "tags", Style: config.StylePipeDelimited},
			"filter": {In: config.InQuery, Name: "filter", Style: config.StyleDeepObject},
			"langs":  {In: config.InHeader, Name: "X-Trace"}},
			map[string]any{"ids": []any{num("1"), num("2")}, "tags": []any{"a", "b|c"}, "filter": map[string]any{"kind": "dog", "age": num("3")}, "langs": []any{"en", "hi"}},
			"/api/pets?filter%5Bage%5D=3&filter%5Bkind%5D=dog&ids=1%2C2&tags=a%7Cb%7Cc", "", "en,hi", ""},
		{"HEAD with a query", "HEAD", "/pets", map[string]config.Param{"limit": {In: config.InQuery, Name: "limit"}},
			map[string]any{"limit": num("1")}, "/api/pets?limit=1", "", "", ""},
		{"a GET's names are not guessed into the body", "GET", "/pets", map[string]config.Param{"limit": {In: config.InQuery, Name: "limit"}},
			map[string]any{"limit": num("5")}, "/api/pets?limit=5", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &seen{}
			b := setup(t, s.handler())
			a := placedAttempt(b.server.URL+"/api", tt.method, tt.path, tt.params, tt.args)
			_, f := b.h.Do(context.Background(), a)
			got := s.all()
			if tt.code != "" {
				if f == nil || f.Code != tt.code || f.Delivered {
					t.Fatalf("failure = %+v, want %s not delivered", f, tt.code)
				}
				if len(got) != 0 {
					t.Fatalf("%d requests sent, want none", len(got))
				}
				return
			}
			if f != nil {
				t.Fatalf("failure: %+v", f)
			}
			if len(got) != 1 {
				t.Fatalf("%d requests, want 1", len(got))
			}
			r := got[0]
			if r.method != tt.method || r.uri != tt.uri || r.body != tt.body || r.header.Get("X-Trace") != tt.header {
				t.Errorf("got %s %s body %q X-Trace %q; want %s %s body %q X-Trace %q",
					r.method, r.uri, r.body, r.header.Get("X-Trace"), tt.method, tt.uri, tt.body, tt.header)
			}
			if tt.body != "" && r.header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type = %q", r.header.Get("Content-Type"))
			}
		})
	}
}

func TestPlacedHeaderNeverReplacesTheDependencys(t *testing.T) {
	s := &seen{}
	b := setup(t, s.handler())
	a := placedAttempt(b.server.URL, "GET", "/me", map[string]config.Param{"key": {In: config.InHeader, Name: "X-Api-Key"}},
		map[string]any{"key": "from-the-model"})
	a.Dependency.Headers = map[string]string{"X-Api-Key": "from-the-config"}
	if _, f := b.h.Do(context.Background(), a); f != nil {
		t.Fatal(f)
	}
	if got := s.all()[0].header.Get("X-Api-Key"); got != "from-the-config" {
		t.Errorf("X-Api-Key = %q, want the dependency's", got)
	}
}
