package execute

import (
	"testing"

	"github.com/toolgate/toolgate/config"
)

func TestBuildRequest(t *testing.T) {
	tests := []struct {
		name       string
		base       string
		method     string
		path       string
		args       map[string]any
		wantMethod string
		wantURL    string
		wantBody   string
		wantErr    string
	}{
		{name: "base with a path and query", base: "http://127.0.0.1:1/api/?v=2", method: "GET", path: "/orders/{id}",
			args: map[string]any{"id": "a b", "x": num("1")}, wantMethod: "GET",
			wantURL: "http://127.0.0.1:1/api/orders/a%20b?v=2&x=1"},
		{name: "query in the path template", base: "http://h/?key=k", method: "GET", path: "/orders?status=open",
			args: map[string]any{"limit": num("5")}, wantMethod: "GET", wantURL: "http://h/orders?key=k&status=open&limit=5"},
		{name: "escaped base path kept", base: "http://h/a%2Fb", method: "DELETE", path: "/{id}",
			args: map[string]any{"id": "x/y"}, wantMethod: "DELETE", wantURL: "http://h/a%2Fb/x%2Fy"},
		{name: "bad scheme", base: "127.0.0.1:9001", method: "GET", path: "/",
			wantErr: `bad base URL: parse "127.0.0.1:9001": first path segment in URL cannot contain colon`},
		{name: "no host", base: "http:///x", method: "GET", path: "/",
			wantErr: `base URL "http:///x" is not an http or https URL`},
		{name: "trailing slash joined", base: "http://127.0.0.1:1/api/", method: "GET", path: "/orders/{id}",
			args: map[string]any{"id": num("7")}, wantMethod: "GET", wantURL: "http://127.0.0.1:1/api/orders/7"},
		{name: "non-string path args as JSON", base: "http://h", method: "GET", path: "/{flag}/{list}",
			args: map[string]any{"flag": true, "list": []any{num("1"), "a"}}, wantMethod: "GET",
			wantURL: `http://h/true/%5B1%2C%22a%22%5D`},
		{name: "empty method is POST", base: "http://h", path: "/x", args: map[string]any{"n": num("1.0")},
			wantMethod: "POST", wantURL: "http://h/x", wantBody: `{"n":1.0}`},
		{name: "PATCH body", base: "http://h", method: "patch", path: "/x/{id}", args: map[string]any{"id": "1", "q": "v"},
			wantMethod: "PATCH", wantURL: "http://h/x/1", wantBody: `{"q":"v"}`},
		{name: "query template values stay one parameter", base: "http://h", method: "GET", path: "/orders?customer={c}&status=open",
			args: map[string]any{"c": "c1&status=all&admin=true#f+g h"}, wantMethod: "GET",
			wantURL: "http://h/orders?customer=c1%26status%3Dall%26admin%3Dtrue%23f%2Bg+h&status=open"},
		{name: "path values stay one segment", base: "http://h", method: "GET", path: "/orders/{id}",
			args: map[string]any{"id": "a/../b?c#d"}, wantMethod: "GET", wantURL: "http://h/orders/a%2F..%2Fb%3Fc%23d"},
		{name: "dot-dot segment", base: "http://h", method: "GET", path: "/orders/{id}/refunds",
			args: map[string]any{"id": ".."}, wantErr: `argument "id" cannot be sent: it would make the path segment "..", which names another resource than the one meant (an empty segment, . or ..)`},
		{name: "dot segment at the end", base: "http://h", method: "GET", path: "/orders/{id}",
			args: map[string]any{"id": "."}, wantErr: `argument "id" cannot be sent: it would make the path segment ".", which names another resource than the one meant (an empty segment, . or ..)`},
		{name: "empty segment before the query", base: "http://h", method: "GET", path: "/orders/{id}?x=1",
			args: map[string]any{"id": ""}, wantErr: `argument "id" cannot be sent: it would make the path segment "", which names another resource than the one meant (an empty segment, . or ..)`},
		{name: "dots beside literal text are no dot segment", base: "http://h", method: "GET", path: "/files/{name}.json",
			args: map[string]any{"name": "."}, wantMethod: "GET", wantURL: "http://h/files/..json"},
		{name: "unclosed brace", base: "http://h", method: "GET", path: "/x/{id",
			wantErr: `path "/x/{id" has an unclosed {`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Attempt{
				Tool:       &config.Tool{Request: &config.Request{Method: tt.method, Path: tt.path}},
				Dependency: &config.Dependency{BaseURL: tt.base},
				Args:       tt.args,
			}
			got, err := buildRequest(a)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.method != tt.wantMethod || got.url != tt.wantURL || string(got.body) != tt.wantBody {
				t.Errorf("got %s %s %s, want %s %s %s", got.method, got.url, got.body, tt.wantMethod, tt.wantURL, tt.wantBody)
			}
			if len(tt.args) > 0 && len(a.Args) != len(tt.args) {
				t.Error("buildRequest changed the attempt's args")
			}
		})
	}
}

func TestOperationKeyHeaderRefused(t *testing.T) {
	tests := []struct {
		name, key string
		args      map[string]any
		wantErr   string
	}{
		{"CRLF from an argument", "tag:o1:x\r\n:r1", map[string]any{"order_id": "o1", "tag": "x\r\n"},
			`argument "tag" cannot be sent: it goes into the operation key sent in the Idempotency-Key header, and it holds the control character '\r', which cannot be sent in the header`},
		{"NUL", "k\x00", map[string]any{"a": "k\x00"},
			`argument "a" cannot be sent: it goes into the operation key sent in the Idempotency-Key header, and it holds the control character '\x00', which cannot be sent in the header`},
		{"trailing blank", "tag:x ", map[string]any{"t": "x "},
			`argument "t" cannot be sent: it goes into the operation key sent in the Idempotency-Key header, and it begins or ends with a blank, which the header would not carry`},
		{"tab and non-ASCII inside are fine", "k\tü", map[string]any{"a": "k\tü"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Attempt{
				Tool:         &config.Tool{Request: &config.Request{Method: "POST", Path: "/tags"}, Idempotency: config.Idempotency{Header: "Idempotency-Key"}},
				Dependency:   &config.Dependency{BaseURL: "http://h"},
				Args:         tt.args,
				OperationKey: tt.key,
			}
			_, err := buildRequest(a)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Fatalf("error = %q, want %q", got, tt.wantErr)
			}
		})
	}
}
