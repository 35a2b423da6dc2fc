package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/sim"
)

// provider is the simulated payment provider, with the failure modes the
// suite needs beside it:
//
//	/orders/..., /refunds    the sim (orders, refunds, Hold)
//	POST /slow-refunds       makes the refund, then never answers
//	POST /lost               never answers and makes nothing
//	GET  /hang               never answers
//	ANY  /status/{code}      answers that status (429 with Retry-After: 1)
//
// "Never answers" means until the client gives up and closes the
// connection, so no handler outlives the test.
type provider struct {
	*sim.Payments
	srv *httptest.Server
}

func startProvider(t *testing.T) *provider {
	t.Helper()
	p := &provider{Payments: sim.NewPayments(
		sim.Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000},
		sim.Order{OrderID: "ORD-1000", CustomerID: "cust_42", AmountPaise: 90000},
		sim.Order{OrderID: "ORD-9999", CustomerID: "someone_else", AmountPaise: 100},
	)}
	p.HonourKeys = true
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

func (p *provider) URL() string { return p.srv.URL }

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/slow-refunds":
		r.URL.Path = "/refunds"
		p.Payments.ServeHTTP(httptest.NewRecorder(), r)
		hang(r)
	case r.URL.Path == "/lost", r.URL.Path == "/hang":
		hang(r)
	case strings.HasPrefix(r.URL.Path, "/status/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"error":"the provider says ` + strconv.Itoa(code) + `"}`))
	default:
		p.Payments.ServeHTTP(w, r)
	}
}

// hang waits until the client gives up. The body is read to its end
// first: only then does net/http watch the connection and cancel the
// request's context when the client closes it.
func hang(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	<-r.Context().Done()
}
