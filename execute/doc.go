// Package execute is stage 2 of the toolgate pipeline: it runs ONE attempt of
// a call against its dependency and classifies what happened. It never
// retries (package retry decides that) and never consults the circuit breaker
// (package breaker, which the pipeline wraps around each attempt).
//
// An Executor returns either a *Response (the dependency answered 2xx, or a
// Go-function tool returned a value) or a *Failure that says three things the
// rest of the pipeline needs:
//
//   - Delivered: false only when non-delivery is proven, so that a write may
//     be repeated safely. Refused, connect timeout, DNS, TLS and other dial
//     failures, and statuses 408, 425, 429 and 503 (the server declined to
//     process) prove it. A read timeout, a reset after the request was
//     written, 500, 502, 504 and every other answer do not.
//   - Transient: whether the same attempt may succeed later. Connect failures
//     (not TLS certificate errors), read timeouts, resets, 408, 425, 429, 500,
//     502, 503 and 504 are transient; other 4xx, panics and the caller's own
//     cancellation are not.
//   - Code: the contract code the failure becomes if it is the last one.
//
// The HTTP executor knows whether the request was written from
// net/http/httptrace (GotConn, WroteRequest). Each tool has its own connect
// and read timeouts: the connect timeout is passed to the transport's dialer
// through the request context, so one transport per dependency serves tools
// with different timeouts; the read timer starts when the request has been
// written and, when it fires, cancels the attempt's context so that the
// transport closes the connection. Nothing outlives Do: the body is always
// closed, and a timed-out connection is never returned to the pool.
//
// Connections go directly to the dependency: proxy environment variables are
// not honoured, because a proxy would blur the line between "never
// delivered" and "delivered, no answer" that retries depend on.
package execute
