package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	nethttp "net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/monitor/metrics"
	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/monitor/tracing"
	"github.com/toolgate/toolgate/server"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/storeurl"
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
	m.metrics = metrics.New(metrics.Config{Breakers: m.breakers, Tools: cfg, Quotas: m.quotas, LiveTools: m.tools})
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

// routes are the monitoring's endpoints. The figures are scoped to the
// caller's key (scoped); /metrics, which names every tool, is for approver
// keys (and anyone in development mode), or is left to metrics_listen when
// the config has one (withMetrics false).
func (m *monitoring) routes(withMetrics bool) []server.Mount {
	mounts := []server.Mount{
		{Pattern: "GET /v1/stats", Handler: m.scoped(m.agg.ServeStats)},
		{Pattern: "GET /v1/stats/series", Handler: m.scoped(m.agg.ServeSeries)},
		{Pattern: "GET /v1/alerts", Handler: m.scoped(m.agg.ServeAlerts)},
	}
	if withMetrics {
		mounts = append(mounts, server.Mount{Pattern: "GET /metrics", Handler: operatorsOnly(m.metrics.Handler())})
	}
	return mounts
}

// scoped serves h with the figures of the tools the caller's key may call
// (its catalogue), or of every tool for an approver key (server.SeesAll).
func (m *monitoring) scoped(h nethttp.HandlerFunc) nethttp.Handler {
	return nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if gw := m.gw.Load(); gw != nil && !server.SeesAll(r.Context()) {
			r = r.WithContext(stats.WithVisible(r.Context(), gw.Catalogue(server.KeyName(r.Context())).Has))
		}
		h(w, r)
	})
}

// operatorsOnly answers 403 to a key that is not an approver: /metrics
// names every tool and counts every key's calls.
func operatorsOnly(h nethttp.Handler) nethttp.Handler {
	return nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if !server.SeesAll(r.Context()) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(nethttp.StatusForbidden)
			fmt.Fprintln(w, "/metrics counts every key's calls of every tool: it needs an approver key (auth.keys[].approver), or serve it on its own address with metrics_listen")
			return
		}
		h.ServeHTTP(w, r)
	})
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

// serveMetrics serves GET /metrics alone, without a key, on addr (the
// config's metrics_listen) until stop is called.
func (m *monitoring) serveMetrics(addr string, stderr io.Writer, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics_listen: %w", err)
	}
	mux := nethttp.NewServeMux()
	mux.Handle("GET /metrics", m.metrics.Handler())
	hs := &nethttp.Server{Handler: mux, ReadHeaderTimeout: server.DefaultReadHeaderTimeout,
		ReadTimeout: 10 * time.Second, WriteTimeout: time.Minute, IdleTimeout: server.DefaultIdleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, nethttp.ErrServerClosed) {
			log.Error("metrics listener failed", "addr", ln.Addr().String(), "err", err)
		}
	}()
	fmt.Fprintf(stderr, "toolgate metrics on http://%s/metrics\n", ln.Addr())
	return func() {
		hs.Close()
		<-done
	}, nil
}
