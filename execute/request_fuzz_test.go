package execute

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/config"
)

// FuzzRequestPlacement places arbitrary argument values in a path segment,
// a templated query parameter, a query parameter of its own and a header,
// writes the request as the transport would, reads it back as the
// dependency would, and asserts that the dependency sees exactly the
// segments and parameters the template names, each value intact; or that
// the call was refused for the one argument that could not be placed.
func FuzzRequestPlacement(f *testing.F) {
	for _, seed := range [][4]string{
		{"ORD-1", "c1", "open", "gift"},
		{"ORD-1", "c1&status=all&admin=true", "a=b&c", "gift"},
		{"ORD-1", "#x+y =z", "+ +", "tab\tinside"},
		{"..", "c1&status=all&admin=true", "a=b", "x\r\nX-Admin: 1"},
		{".", "#frag", "+ +", "tab\tinside"},
		{"", "%zz", "%2e%2e", "trailing "},
		{"a/../b", "q;r", "?x", "ü\x00"},
		{"%2e%2e", "=", "&", "\x7f"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	h := NewHTTP(HTTPOptions{})
	f.Fuzz(func(t *testing.T, segment, customer, extra, tag string) {
		a := &Attempt{
			Tool: &config.Tool{
				Name:        "t",
				Request:     &config.Request{Method: "GET", Path: "/a/{segment}/b?customer={customer}&fixed=1"},
				Idempotency: config.Idempotency{Header: "Idempotency-Key"},
			},
			Dependency:   &config.Dependency{BaseURL: "http://127.0.0.1:1/base"},
			Args:         map[string]any{"segment": segment, "customer": customer, "extra": extra, "tag": tag},
			OperationKey: "k:" + tag,
		}
		wantRefused := ""
		switch {
		case segment == "" || segment == "." || segment == "..":
			wantRefused = "segment"
		case headerValueProblem(a.OperationKey) != "":
			wantRefused = "tag"
		}
		built, err := buildRequest(a)
		if err != nil {
			var argErr *ArgumentError
			if !errors.As(err, &argErr) || argErr.Arg != wantRefused && !sharesTheBlame(a, argErr.Arg) {
				t.Fatalf("refused %v, want a refusal of %q", err, wantRefused)
			}
			return
		}
		if wantRefused != "" {
			t.Fatalf("built %s, want a refusal of %q", built.url, wantRefused)
		}

		req, err := http.NewRequest(built.method, built.url, nil)
		if err != nil {
			t.Fatalf("the built URL %q does not parse: %v", built.url, err)
		}
		h.setHeaders(req, a, false)
		var wire bytes.Buffer
		if err := req.Write(&wire); err != nil {
			t.Fatal(err)
		}
		got, err := http.ReadRequest(bufio.NewReader(&wire))
		if err != nil {
			t.Fatalf("the dependency cannot read the request: %v\n%q", err, wire.String())
		}

		segments := strings.Split(got.URL.EscapedPath(), "/")
		if len(segments) != 5 || segments[1] != "base" || segments[2] != "a" || segments[4] != "b" {
			t.Fatalf("path %q, want /base/a/<segment>/b", got.URL.EscapedPath())
		}
		if v, err := url.PathUnescape(segments[3]); err != nil || v != segment {
			t.Fatalf("segment %q reads back as %q (%v), want %q", segments[3], v, err, segment)
		}
		query, err := url.ParseQuery(got.URL.RawQuery)
		if err != nil {
			t.Fatalf("query %q: %v", got.URL.RawQuery, err)
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range query {
				if !yield(k) {
					return
				}
			}
		})
		if !slices.Equal(keys, []string{"customer", "extra", "fixed", "tag"}) {
			t.Fatalf("query %q has the parameters %q", got.URL.RawQuery, keys)
		}
		for name, want := range map[string]string{"customer": customer, "extra": extra, "fixed": "1", "tag": tag} {
			if v := query[name]; len(v) != 1 || v[0] != want {
				t.Fatalf("query parameter %s = %q, want [%q]", name, v, want)
			}
		}
		if v := got.Header.Values("Idempotency-Key"); len(v) != 1 || v[0] != a.OperationKey {
			t.Fatalf("Idempotency-Key = %q, want %q", v, a.OperationKey)
		}
	})
}

// sharesTheBlame reports whether the header refusal of an attempt may name
// arg: its value is in the operation key and cannot be sent itself (the
// key "k:\r" does not say whether "\r" came from tag or from another
// argument holding "\r").
func sharesTheBlame(a *Attempt, arg string) bool {
	text, _ := a.Args[arg].(string)
	return wantHeaderRefusal(a) && text != "" && strings.Contains(a.OperationKey, text) && headerValueProblem(text) != ""
}

func wantHeaderRefusal(a *Attempt) bool {
	seg, _ := a.Args["segment"].(string)
	return seg != "" && seg != "." && seg != ".." && headerValueProblem(a.OperationKey) != ""
}
