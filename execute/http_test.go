package execute

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/types"
)

func TestStatusMapping(t *testing.T) {
	type answer struct {
		status int
		header map[string]string
		body   string
	}
	tests := []struct {
		name   string
		answer answer
		// want is the response on success; failure the failure otherwise.
		want    *Response
		failure *Failure
	}{
		{
			name:   "200 JSON",
			answer: answer{200, nil, `{"order_id":"ORD-1","amount_paise":9007199254740993}`},
			want:   &Response{Status: 200, Data: []byte(`{"order_id":"ORD-1","amount_paise":9007199254740993}`)},
		},
		{
			name:   "200 text body becomes a JSON string",
			answer: answer{200, map[string]string{"Content-Type": "text/plain"}, "all good\n"},
			want:   &Response{Status: 200, Data: []byte(`"all good\n"`)},
		},
		{
			name:   "201 JSON with surrounding whitespace",
			answer: answer{201, nil, "\n  [1, 2]\n"},
			want:   &Response{Status: 201, Data: []byte(`[1, 2]`)},
		},
		{
			name:   "204 empty is null",
			answer: answer{204, nil, ""},
			want:   &Response{Status: 204, Data: []byte(`null`)},
		},
		{
			name:   "400 is rejected, delivered, permanent",
			answer: answer{400, nil, `{"error":{"message":"amount_paise must be positive"}}`},
			failure: &Failure{Kind: KindStatus, Status: 400, Delivered: true, Transient: false, Code: types.CodeRejected,
				Data:    []byte(`{"error":{"message":"amount_paise must be positive"}}`),
				Message: "payments answered 400 Bad Request: amount_paise must be positive"},
		},
		{
			name:   "404 with a text body",
			answer: answer{404, nil, "no such order"},
			failure: &Failure{Kind: KindStatus, Status: 404, Delivered: true, Code: types.CodeRejected,
				Data: []byte(`"no such order"`), Message: "payments answered 404 Not Found: no such order"},
		},
		{
			name:   "429 with Retry-After seconds",
			answer: answer{429, map[string]string{"Retry-After": "7"}, `{"message":"slow down"}`},
			failure: &Failure{Kind: KindStatus, Status: 429, Delivered: false, Transient: true, Code: types.CodeRateLimited,
				RetryAfter: 7 * time.Second, Data: []byte(`{"message":"slow down"}`),
				Message: "payments answered 429 Too Many Requests: slow down"},
		},
		{
			name:   "503 with Retry-After date",
			answer: answer{503, map[string]string{"Retry-After": epoch.Add(90 * time.Second).Format(http.TimeFormat)}, ""},
			failure: &Failure{Kind: KindStatus, Status: 503, Delivered: false, Transient: true, Code: types.CodeUpstreamError,
				RetryAfter: 90 * time.Second, Data: []byte(`null`), Message: "payments answered 503 Service Unavailable"},
		},
		{
			name:   "408 declined",
			answer: answer{408, nil, ""},
			failure: &Failure{Kind: KindStatus, Status: 408, Delivered: false, Transient: true, Code: types.CodeUpstreamError,
				Data: []byte(`null`), Message: "payments answered 408 Request Timeout"},
		},
		{
			name:   "425 declined",
			answer: answer{425, nil, ""},
			failure: &Failure{Kind: KindStatus, Status: 425, Delivered: false, Transient: true, Code: types.CodeUpstreamError,
				Data: []byte(`null`), Message: "payments answered 425 Too Early"},
		},
		{
			name:   "500 delivered, transient",
			answer: answer{500, nil, `{"detail":"database\nlocked"}`},
			failure: &Failure{Kind: KindStatus, Status: 500, Delivered: true, Transient: true, Code: types.CodeUpstreamError,
				Data: []byte(`{"detail":"database\nlocked"}`), Message: "payments answered 500 Internal Server Error: database locked"},
		},
		{
			name:   "502",
			answer: answer{502, nil, "<html>bad gateway</html>"},
			failure: &Failure{Kind: KindStatus, Status: 502, Delivered: true, Transient: true, Code: types.CodeUpstreamError,
				Data: []byte(`"<html>bad gateway</html>"`), Message: "payments answered 502 Bad Gateway: <html>bad gateway</html>"},
		},
		{
			name:   "504",
			answer: answer{504, map[string]string{"Retry-After": "5"}, ""},
			failure: &Failure{Kind: KindStatus, Status: 504, Delivered: true, Transient: true, Code: types.CodeUpstreamError,
				Data: []byte(`null`), Message: "payments answered 504 Gateway Timeout"},
		},
		{
			name:   "501 is permanent",
			answer: answer{501, nil, ""},
			failure: &Failure{Kind: KindStatus, Status: 501, Delivered: true, Transient: false, Code: types.CodeUpstreamError,
				Data: []byte(`null`), Message: "payments answered 501 Not Implemented"},
		},
		{
			name:   "redirects are not followed",
			answer: answer{302, map[string]string{"Location": "/elsewhere"}, ""},
			failure: &Failure{Kind: KindStatus, Status: 302, Delivered: true, Transient: false, Code: types.CodeUpstreamError,
				Data: []byte(`null`), Message: "payments answered 302 Found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.answer.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.answer.status)
				io.WriteString(w, tt.answer.body)
			}))
			resp, failure := b.h.Do(context.Background(), httpAttempt(b.server.URL, "GET", "/x", nil))
			if tt.want != nil {
				if failure != nil {
					t.Fatalf("failure %+v, want a response", failure)
				}
				if resp.Status != tt.want.Status || string(resp.Data) != string(tt.want.Data) {
					t.Errorf("response %d %s, want %d %s", resp.Status, resp.Data, tt.want.Status, tt.want.Data)
				}
				return
			}
			if failure == nil {
				t.Fatalf("response %d %s, want a failure", resp.Status, resp.Data)
			}
			got := *failure
			got.Err = nil
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", *tt.failure) {
				t.Errorf("failure\n got %+v\nwant %+v", got, *tt.failure)
			}
		})
	}
}

// recorded is what the test dependency saw of one request.
type recorded struct {
	method, rawPath, rawQuery string
	header                    http.Header
	body                      string
}

func TestRequestShape(t *testing.T) {
	tests := []struct {
		name        string
		method      string
		path        string
		args        map[string]any
		idempotency config.Idempotency
		key         string
		depHeaders  map[string]string
		want        recorded
		wantHeaders map[string]string // "" means the header must be absent
	}{
		{
			name:   "GET escapes path args and sends the rest as the query",
			method: "GET",
			path:   "/orders/{order_id}/items/{n}",
			args: map[string]any{
				"order_id": "ORD 1/2?#", "n": num("3"),
				"status": []any{"open", "paid"}, "limit": num("9007199254740993"),
				"filter": map[string]any{"b": true, "a": "x&y"}, "verbose": true, "cursor": nil,
			},
			want: recorded{
				method:   "GET",
				rawPath:  "/orders/ORD%201%2F2%3F%23/items/3",
				rawQuery: "filter=%7B%22a%22%3A%22x%26y%22%2C%22b%22%3Atrue%7D&limit=9007199254740993&status=open&status=paid&verbose=true",
			},
			wantHeaders: map[string]string{"Accept": "application/json", "User-Agent": "toolgate", "Content-Type": ""},
		},
		{
			name:   "DELETE sends the query too",
			method: "delete",
			path:   "/refunds/{id}",
			args:   map[string]any{"id": num("42"), "reason": "dup"},
			want:   recorded{method: "DELETE", rawPath: "/refunds/42", rawQuery: "reason=dup"},
		},
		{
			name:   "POST sends a JSON body with the exact big integer",
			method: "POST",
			path:   "/orders/{order_id}/refunds",
			args: map[string]any{"order_id": "ORD-4471", "amount_paise": num("9007199254740993"),
				"price": num("0.10"), "note": "<b>&</b>", "tags": []any{"a", num("1e2")}},
			want: recorded{
				method:  "POST",
				rawPath: "/orders/ORD-4471/refunds",
				body:    `{"amount_paise":9007199254740993,"note":"<b>&</b>","price":0.10,"tags":["a",1e2]}`,
			},
			wantHeaders: map[string]string{"Content-Type": "application/json"},
		},
		{
			name:   "POST with no remaining args sends an empty object",
			method: "PUT",
			path:   "/orders/{order_id}",
			args:   map[string]any{"order_id": "A"},
			want:   recorded{method: "PUT", rawPath: "/orders/A", body: `{}`},
		},
		{
			name:        "idempotency key and dependency headers",
			method:      "POST",
			path:        "/refunds",
			args:        map[string]any{"amount_paise": num("425000")},
			idempotency: config.Idempotency{Header: "Idempotency-Key"},
			key:         "refund:ORD-4471:425000:r1",
			depHeaders:  map[string]string{"Authorization": "Bearer secret", "User-Agent": "custom/1"},
			want:        recorded{method: "POST", rawPath: "/refunds", body: `{"amount_paise":425000}`},
			wantHeaders: map[string]string{
				"Idempotency-Key": "refund:ORD-4471:425000:r1",
				"Authorization":   "Bearer secret",
				"User-Agent":      "custom/1",
				"Accept":          "application/json",
			},
		},
		{
			name:        "no header without a configured header name",
			method:      "POST",
			path:        "/refunds",
			key:         "refund:1",
			want:        recorded{method: "POST", rawPath: "/refunds", body: `{}`},
			wantHeaders: map[string]string{"Idempotency-Key": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := make(chan recorded, 1)
			b := setup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				seen <- recorded{method: r.Method, rawPath: r.URL.EscapedPath(), rawQuery: r.URL.RawQuery,
					header: r.Header.Clone(), body: string(body)}
				io.WriteString(w, `{"ok":true}`)
			}))
			a := httpAttempt(b.server.URL+"/", tt.method, tt.path, tt.args)
			a.Tool.Idempotency = tt.idempotency
			a.OperationKey = tt.key
			a.Dependency.Headers = tt.depHeaders
			if _, failure := b.h.Do(context.Background(), a); failure != nil {
				t.Fatalf("Do: %v", failure)
			}
			got := <-seen
			if got.method != tt.want.method || got.rawPath != tt.want.rawPath ||
				got.rawQuery != tt.want.rawQuery || got.body != tt.want.body {
				t.Errorf("request\n got %s %s ? %s body %s\nwant %s %s ? %s body %s",
					got.method, got.rawPath, got.rawQuery, got.body,
					tt.want.method, tt.want.rawPath, tt.want.rawQuery, tt.want.body)
			}
			for k, want := range tt.wantHeaders {
				if v := got.header.Get(k); v != want {
					t.Errorf("header %s = %q, want %q", k, v, want)
				}
			}
		})
	}
}

func TestConnectRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	h := NewHTTP(HTTPOptions{})
	defer h.Close()
	_, failure := h.Do(context.Background(), httpAttempt("http://"+addr, "POST", "/refunds", nil))
	want := Failure{Kind: KindConnectRefused, Delivered: false, Transient: true, Code: types.CodeConnectFailed,
		Message: "connection refused by " + addr}
	assertFailure(t, failure, want)
}

func TestReadTimeout(t *testing.T) {
	tests := []struct {
		name string
		// headersFirst sends the status line and headers, then stalls in
		// the body.
		headersFirst bool
	}{
		{"no answer at all", false},
		{"headers then a stalled body", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			serverSawCancel := make(chan struct{})
			newConns := make(chan struct{}, 10)
			closedConns := make(chan struct{}, 10)
			server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/fast" {
					io.WriteString(w, `{}`)
					return
				}
				// Read the body to its end, so that the server watches the
				// connection and cancels r.Context() when it closes.
				io.ReadAll(r.Body)
				if tt.headersFirst {
					w.WriteHeader(200)
					io.WriteString(w, `{"partial":`)
					w.(http.Flusher).Flush()
				}
				select {
				case <-release:
				case <-r.Context().Done():
					close(serverSawCancel)
				}
			}))
			server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
				switch state {
				case http.StateNew:
					newConns <- struct{}{}
				case http.StateClosed:
					closedConns <- struct{}{}
				}
			}
			server.Start()
			defer close(release)
			defer server.Close()
			h := NewHTTP(HTTPOptions{})
			defer h.Close()
			before := goleak.IgnoreCurrent() // the test server's accept loop

			fast := httpAttempt(server.URL, "GET", "/fast", nil)
			if _, failure := h.Do(context.Background(), fast); failure != nil {
				t.Fatalf("warm-up: %v", failure)
			}
			slow := httpAttempt(server.URL, "POST", "/slow", nil)
			slow.Tool.Timeout = config.Timeout{Read: config.Duration(100 * time.Millisecond)}
			_, failure := h.Do(context.Background(), slow)
			assertFailure(t, failure, Failure{Kind: KindReadTimeout, Delivered: true, Transient: true,
				Code: types.CodeTimeoutUnknownOutcome, Message: "no answer from payments within 100ms after the request was sent"})

			// The server sees the connection go away: the attempt did not
			// leave it open.
			<-serverSawCancel
			<-closedConns
			// Nothing of the attempt is left: no timer, no connection loops.
			goleak.VerifyNone(t, before)

			// The timed-out connection was not pooled: the next attempt dials.
			if _, failure := h.Do(context.Background(), fast); failure != nil {
				t.Fatalf("after the timeout: %v", failure)
			}
			if n := len(newConns); n != 2 {
				t.Errorf("%d connections opened, want 2 (warm-up reused by the slow attempt, then a fresh one)", n)
			}
		})
	}
	goleak.VerifyNone(t)
}

func TestResetAfterWrite(t *testing.T) {
	b := setup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		conn.Close()
	}))
	_, failure := b.h.Do(context.Background(), httpAttempt(b.server.URL, "POST", "/refunds", map[string]any{"a": num("1")}))
	if failure == nil {
		t.Fatal("no failure")
	}
	if failure.Kind != KindReset || !failure.Delivered || !failure.Transient || failure.Code != types.CodeTimeoutUnknownOutcome {
		t.Fatalf("failure = %+v, want reset, delivered, transient, timeout_unknown_outcome", failure)
	}
	if !strings.HasPrefix(failure.Message, "the connection to payments broke after the request was sent") {
		t.Errorf("Message = %q", failure.Message)
	}
}

func TestCallerCancel(t *testing.T) {
	t.Run("after the request was sent", func(t *testing.T) {
		started := make(chan struct{})
		b := setup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body) // so that the server notices the connection close
			close(started)
			<-r.Context().Done()
		}))
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-started
			cancel()
		}()
		_, failure := b.h.Do(ctx, httpAttempt(b.server.URL, "POST", "/refunds", nil))
		if failure == nil || failure.Kind != KindCanceled || !failure.Delivered || failure.Transient {
			t.Fatalf("failure = %+v, want canceled, delivered, not transient", failure)
		}
		if !errors.Is(failure, context.Canceled) {
			t.Errorf("failure does not wrap context.Canceled: %v", failure.Err)
		}
		if failure.Unhealthy() {
			t.Errorf("a caller's cancel counts against the dependency")
		}
	})
	t.Run("before anything was sent", func(t *testing.T) {
		b := setup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Error("the request reached the server")
		}))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, failure := b.h.Do(ctx, httpAttempt(b.server.URL, "POST", "/refunds", nil))
		if failure == nil || failure.Kind != KindCanceled || failure.Delivered || failure.Transient {
			t.Fatalf("failure = %+v, want canceled, not delivered, not transient", failure)
		}
	})
}

func TestTLS(t *testing.T) {
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"secure":true}`)
	}))
	server.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	server.StartTLS()
	defer server.Close()

	t.Run("untrusted certificate is a permanent connect failure", func(t *testing.T) {
		h := NewHTTP(HTTPOptions{})
		defer h.Close()
		_, failure := h.Do(context.Background(), httpAttempt(server.URL, "GET", "/", nil))
		if failure == nil || failure.Kind != KindConnectFailed || failure.Delivered || failure.Transient ||
			failure.Code != types.CodeConnectFailed {
			t.Fatalf("failure = %+v, want connect_failed, not delivered, not transient", failure)
		}
		var unknownAuthority x509.UnknownAuthorityError
		var verification *tls.CertificateVerificationError
		if !errors.As(failure, &unknownAuthority) && !errors.As(failure, &verification) {
			t.Errorf("failure does not wrap the certificate error: %v", failure.Err)
		}
	})
	t.Run("trusted certificate", func(t *testing.T) {
		roots := x509.NewCertPool()
		roots.AddCert(server.Certificate())
		h := NewHTTP(HTTPOptions{TLSConfig: &tls.Config{RootCAs: roots}})
		defer h.Close()
		resp, failure := h.Do(context.Background(), httpAttempt(server.URL, "GET", "/", nil))
		if failure != nil {
			t.Fatal(failure)
		}
		if string(resp.Data) != `{"secure":true}` {
			t.Errorf("Data = %s", resp.Data)
		}
	})
}

func TestTooLarge(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `"0123456789"`)
	}))
	defer server.Close()
	tests := []struct {
		limit int64
		ok    bool
	}{{12, true}, {11, false}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			h := NewHTTP(HTTPOptions{MaxResponseBytes: tt.limit})
			defer h.Close()
			_, failure := h.Do(context.Background(), httpAttempt(server.URL, "GET", "/", nil))
			if tt.ok != (failure == nil) {
				t.Fatalf("failure = %v, want ok = %v", failure, tt.ok)
			}
			if failure != nil && (failure.Kind != KindTooLarge || !failure.Delivered || failure.Transient) {
				t.Errorf("failure = %+v, want too_large, delivered, permanent", failure)
			}
		})
	}
}

func TestInvalidRequest(t *testing.T) {
	tests := []struct {
		name    string
		attempt *Attempt
		message string
	}{
		{"missing path argument", httpAttempt("http://127.0.0.1:1", "GET", "/orders/{order_id}", nil),
			`cannot build the request for tool: the path "/orders/{order_id}" needs argument "order_id", which the call did not supply`},
		{"bad scheme", httpAttempt("ftp://127.0.0.1:1", "GET", "/", nil),
			`cannot build the request for tool: base URL "ftp://127.0.0.1:1" is not an http or https URL`},
		{"no dependency", &Attempt{Tool: &config.Tool{Name: "t", Request: &config.Request{Method: "GET"}}},
			"cannot build the request for t: the tool has no dependency"},
	}
	h := NewHTTP(HTTPOptions{})
	defer h.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, failure := h.Do(context.Background(), tt.attempt)
			assertFailure(t, failure, Failure{Kind: KindInvalidRequest, Code: types.CodeInternalError, Message: tt.message})
		})
	}
}

func TestConcurrentAttemptsShareTheTransport(t *testing.T) {
	b := setup(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			a := httpAttempt(b.server.URL, "POST", "/echo", map[string]any{"i": num(fmt.Sprint(i))})
			// Different tools, different timeouts, one transport.
			a.Tool.Timeout.Connect = config.Duration(time.Duration(i+1) * time.Second)
			resp, failure := b.h.Do(context.Background(), a)
			if failure != nil {
				errs <- failure
				return
			}
			if want := fmt.Sprintf(`{"i":%d}`, i); string(resp.Data) != want {
				errs <- fmt.Errorf("got %s, want %s", resp.Data, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(b.h.transports); n != 1 {
		t.Errorf("%d transports, want 1", n)
	}
}

// assertFailure compares a failure with want, ignoring Err.
func assertFailure(t *testing.T, got *Failure, want Failure) {
	t.Helper()
	if got == nil {
		t.Fatalf("no failure, want %+v", want)
	}
	g := *got
	g.Err = nil
	if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", want) {
		t.Fatalf("failure\n got %+v\nwant %+v", g, want)
	}
}
