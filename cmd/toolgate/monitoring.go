package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	nethttp "net/http"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute/breaker"
	"github.com/toolgate/toolgate/internal/storeurl"
	"github.com/toolgate/toolgate/monitor/metrics"
	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/monitor/tracing"
	"github.com/toolgate/toolgate/server"
	"github.com/toolgate/toolgate/store"
)

// monitoring is what `serve` records beside its calls: the store is opened
// here (timed by the metrics), the stats aggregator and the Prometheus
// metrics are the gateway's sinks, the tracer its spans' exporter, and
// their endpoints are mounted. It is opened before the gateway, which it
// reads (breakers, live tools, quotas) once attached.
type monitoring struct {
	owner    string
	store    store.Store
	agg      *stats.Aggregator
	metrics  *metrics.Metrics
	tracer   trace.Tracer
	shutdown func(context.Context) error
	gw       atomic.Pointer[toolgate.Gateway]
}

// openMonitoring opens the config's store with crash recovery, the stats
// on it, the metrics and the tracing of the config's telemetry (a stdout
// exporter writes to stdout).
func openMonitoring(ctx context.Context, cfg *config.Config, stdout io.Writer, log *slog.Logger) (*monitoring, error) {
	m := &monitoring{owner: toolgate.DefaultOwner()}
	m.metrics = metrics.New(metrics.Config{Breakers: m.breakers, Tools: cfg, Quotas: m.quotas})
	st, err := storeurl.Open(ctx, cfg.Store, storeurl.Options{Owner: m.owner, Recover: true})
	if err != nil {
		return nil, err
	}
	m.store = metrics.InstrumentStore(st, m.metrics)
	m.agg, err = stats.New(ctx, &stats.Config{Store: m.store, Tools: cfg, LiveTools: m.tools, Replica: m.owner, Breakers: m.breakers})
	if err != nil {
		st.Close()
		return nil, err
	}
	tp, shutdown, err := tracing.Setup(ctx, cfg.Telemetry, stdout)
	if err != nil {
		m.agg.Close(ctx)
		st.Close()
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	tracing.LogErrors(log)
	m.tracer, m.shutdown = tracing.Tracer(tp), shutdown
	return m, nil
}

// gatewayOptions puts the monitoring's store, owner, sinks and tracer into
// opts.
func (m *monitoring) gatewayOptions(opts toolgate.Options) toolgate.Options {
	opts.Store, opts.StoreFromConfig, opts.Owner = m.store, false, m.owner
	opts.Sinks = append(opts.Sinks, m.agg, m.metrics)
	opts.Tracer = m.tracer
	return opts
}

// attach lets the metrics and the stats read the open gateway.
func (m *monitoring) attach(gw *toolgate.Gateway) { m.gw.Store(gw) }

// routes are the monitoring's endpoints.
func (m *monitoring) routes() []server.Mount {
	return []server.Mount{
		{Pattern: "GET /v1/stats", Handler: nethttp.HandlerFunc(m.agg.ServeStats)},
		{Pattern: "GET /v1/stats/series", Handler: nethttp.HandlerFunc(m.agg.ServeSeries)},
		{Pattern: "GET /v1/alerts", Handler: nethttp.HandlerFunc(m.agg.ServeAlerts)},
		{Pattern: "GET /metrics", Handler: m.metrics.Handler(), Public: true},
	}
}

// reloaded gives the stats the reloaded config's read timeouts.
func (m *monitoring) reloaded(cfg *config.Config) { m.agg.SetTools(cfg) }

// close saves the last stats buckets, closes the store and flushes the
// spans. The gateway must be closed first.
func (m *monitoring) close(ctx context.Context, log *slog.Logger) {
	if err := m.agg.Close(ctx); err != nil {
		log.Error("saving the last stats buckets", "err", err)
	}
	if err := m.store.Close(); err != nil {
		log.Error("closing the store", "err", err)
	}
	if err := m.shutdown(ctx); err != nil {
		log.Error("flushing traces", "err", err)
	}
}

// breakers is the gateway's circuit breakers, none before it is attached.
func (m *monitoring) breakers() []breaker.Snapshot {
	if gw := m.gw.Load(); gw != nil {
		return gw.Breakers()
	}
	return nil
}

// tools is the gateway's current tools (with those imported from MCP
// servers), nil before it is attached.
func (m *monitoring) tools() *config.Config {
	if gw := m.gw.Load(); gw != nil {
		return gw.Config()
	}
	return nil
}
