package main

import (
	"context"
	"fmt"
	"log/slog"
	nethttp "net/http"
	"os"

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

// monitoring wires stats, Prometheus metrics and traces into `serve`: the
// store is opened here (timed by the metrics), the aggregator and the
// metrics are the pipeline's sinks, and their endpoints are mounted.
type monitoring struct {
	owner    string
	store    store.Store
	agg      *stats.Aggregator
	metrics  *metrics.Metrics
	shutdown func(context.Context) error
	gw       *toolgate.Gateway
}

func init() {
	m := &monitoring{}
	serveHooks = append(serveHooks, serveHook{Before: m.before, Mounts: m.mounts, Reloaded: m.reloaded})
}

func (m *monitoring) breakers() []breaker.Snapshot {
	if m.gw == nil {
		return nil
	}
	return m.gw.Breakers()
}

// tools is the gateway's current tools (with those imported from MCP
// servers), nil before it opens.
func (m *monitoring) tools() *config.Config {
	if m.gw == nil {
		return nil
	}
	return m.gw.Config()
}

func (m *monitoring) before(ctx context.Context, cfg *config.Config, opts *toolgate.Options) error {
	m.owner = toolgate.DefaultOwner()
	m.metrics = metrics.New(metrics.Config{Breakers: m.breakers, Tools: cfg, Quotas: m.quotas})
	st, err := storeurl.Open(ctx, cfg.Store, storeurl.Options{Owner: m.owner, Recover: true})
	if err != nil {
		return err
	}
	m.store = metrics.InstrumentStore(st, m.metrics)
	m.agg, err = stats.New(ctx, &stats.Config{Store: m.store, Tools: cfg, LiveTools: m.tools, Replica: m.owner, Breakers: m.breakers})
	if err != nil {
		st.Close()
		return err
	}
	tp, shutdown, err := tracing.Setup(ctx, cfg.Telemetry, os.Stdout)
	if err != nil {
		m.agg.Close(ctx)
		st.Close()
		return fmt.Errorf("telemetry: %w", err)
	}
	m.shutdown = shutdown
	if opts.Logger != nil {
		tracing.LogErrors(opts.Logger)
	}
	opts.Store, opts.StoreFromConfig, opts.Owner = m.store, false, m.owner
	opts.Sinks = append(opts.Sinks, m.agg, m.metrics)
	opts.Tracer = tracing.Tracer(tp)
	return nil
}

// reloaded gives the stats the reloaded config's read timeouts.
func (m *monitoring) reloaded(cfg *config.Config) { m.agg.SetTools(cfg) }

func (m *monitoring) mounts(ctx context.Context, gw *toolgate.Gateway, log *slog.Logger) ([]server.Mount, func(), error) {
	m.gw = gw
	cleanup := func() {
		ctx := context.WithoutCancel(ctx)
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
	return []server.Mount{
		{Pattern: "GET /v1/stats", Handler: nethttp.HandlerFunc(m.agg.ServeStats)},
		{Pattern: "GET /v1/stats/series", Handler: nethttp.HandlerFunc(m.agg.ServeSeries)},
		{Pattern: "GET /v1/alerts", Handler: nethttp.HandlerFunc(m.agg.ServeAlerts)},
		{Pattern: "GET /metrics", Handler: m.metrics.Handler(), Public: true},
	}, cleanup, nil
}
