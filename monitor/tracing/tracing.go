// Package tracing sets up the OpenTelemetry exporter chosen in the config
// (telemetry.traces): none, stdout or OTLP over HTTP. The spans themselves
// are made by the pipeline: one "execute_tool {tool}" span per call,
// following the GenAI semantic conventions, with a CLIENT child span per
// attempt (named after the HTTP method, with the HTTP client attributes;
// "attempt {tool}" for Go-function tools), and "owner_lookup {tool}" and
// "verify_lookup {tool}" spans around the attempts of lookups. Pass the provider's tracer to toolgate.Options.Tracer
// (or pipeline.Config.Tracer):
//
//	tp, shutdown, err := tracing.Setup(ctx, cfg.Telemetry, os.Stderr)
//	...
//	defer shutdown(context.Background())
//	tracing.LogErrors(logger) // export failures through slog
//	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, Tracer: tracing.Tracer(tp)})
//
// Trace context: a call's span is the child of the W3C traceparent the
// caller sent (the HTTP API's traceparent header, or the traceparent key of
// an MCP tools/call's _meta), and every request toolgate sends to a
// dependency carries the traceparent of its attempt span (see
// internal/tracectx).
package tracing

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/buildinfo"
)

// TracerName is the instrumentation scope to ask the provider for: the
// same name the pipeline's default tracer uses.
const TracerName = "github.com/toolgate/toolgate"

// Tracer is tp's tracer for toolgate's spans: the instrumentation scope
// TracerName at toolgate's version.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	return tp.Tracer(TracerName, trace.WithInstrumentationVersion(buildinfo.Version()))
}

// LogErrors sends OpenTelemetry's own errors (a span export that failed, a
// collector that cannot be reached) to log, at error level, instead of the
// standard library's logger: they come out in the configured log format.
// It sets the process-wide OpenTelemetry error handler.
func LogErrors(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Error("opentelemetry", "err", err)
	}))
}

// OTLPTracesPath is where spans are posted when the endpoint is a base URL
// (no path), as OTEL_EXPORTER_OTLP_ENDPOINT is understood.
const OTLPTracesPath = "/v1/traces"

// Setup returns the tracer provider the config asks for and the function
// that flushes and stops it (call it on shutdown; it is never nil):
//
//   - none (or empty): a no-op provider; nothing is recorded.
//   - stdout: spans written to w as JSON, each when it ends.
//   - otlp: spans batched and posted over HTTP to cfg.OTLPEndpoint (its
//     /v1/traces when the URL has no path). An unreachable collector does
//     not fail Setup: the exporter retries, then drops.
//
// The provider is not installed globally: pass its tracer on.
func Setup(ctx context.Context, cfg config.Telemetry, w io.Writer) (trace.TracerProvider, func(context.Context) error, error) {
	noShutdown := func(context.Context) error { return nil }
	var opt sdktrace.TracerProviderOption
	switch cfg.Traces {
	case "", config.DefaultTraces:
		return noop.NewTracerProvider(), noShutdown, nil
	case "stdout":
		exp, err := stdouttrace.New(stdouttrace.WithWriter(w))
		if err != nil {
			return nil, nil, fmt.Errorf("tracing: stdout: %w", err)
		}
		opt = sdktrace.WithSyncer(exp)
	case "otlp":
		opts, err := otlpOptions(cfg.OTLPEndpoint)
		if err != nil {
			return nil, nil, err
		}
		exp, err := otlptracehttp.New(ctx, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("tracing: otlp: %w", err)
		}
		opt = sdktrace.WithBatcher(exp)
	default:
		return nil, nil, fmt.Errorf("tracing: %q is not an exporter: use none, stdout or otlp", cfg.Traces)
	}
	name := cfg.ServiceName
	if name == "" {
		name = config.DefaultServiceName
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion(buildinfo.Version())))
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(opt, sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// otlpOptions points the exporter at an endpoint URL.
func otlpOptions(endpoint string) ([]otlptracehttp.Option, error) {
	if endpoint == "" {
		endpoint = config.DefaultOTLPEndpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tracing: otlp endpoint %q must be an http:// or https:// URL", endpoint)
	}
	path := u.Path
	if strings.Trim(path, "/") == "" {
		path = OTLPTracesPath
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithURLPath(path)}
	if u.Scheme == "http" {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	return opts, nil
}
