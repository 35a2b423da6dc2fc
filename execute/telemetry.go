package execute

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/tracectx"
)

// traceRequest passes the attempt's trace context (and baggage) on to the
// dependency, and names and attributes the attempt's span, when it records,
// after the OpenTelemetry HTTP client conventions: the span is named after
// the method and carries http.request.method, server.address, server.port
// and url.full (without user info).
func traceRequest(ctx context.Context, req *http.Request) {
	tracectx.Inject(ctx, req.Header)
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetName(req.Method)
	u := *req.URL
	u.User = nil
	span.SetAttributes(
		semconv.HTTPRequestMethodKey.String(req.Method),
		semconv.ServerAddress(u.Hostname()),
		semconv.ServerPort(port(&u)),
		semconv.URLFull(u.String()),
	)
}

// port is the URL's port, explicit or the scheme's default.
func port(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}
