package load

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// Dependency is the fake dependency every path calls in the end: it
// answers at once.
//
//	GET  /orders/{id}  a small order document
//	POST /records      {"record_id": "R-N"} for any body
type Dependency struct {
	records atomic.Int64
}

// orderBody is the order document, the size of a typical tool answer.
const orderBody = `{"order_id":"%s","customer_id":"cust_42","status":"delivered","amount_paise":425000,"currency":"INR","items":[{"sku":"SKU-1","qty":1},{"sku":"SKU-2","qty":2}]}`

// ServeHTTP implements http.Handler.
func (d *Dependency) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/orders/"):
		body := fmt.Sprintf(orderBody, strings.TrimPrefix(r.URL.Path, "/orders/"))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body)
	case r.Method == http.MethodPost && r.URL.Path == "/records":
		_, _ = io.Copy(io.Discard, r.Body)
		body := `{"record_id":"R-` + strconv.FormatInt(d.records.Add(1), 10) + `"}`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = io.WriteString(w, body)
	default:
		http.NotFound(w, r)
	}
}
