package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/monitor/stats"
	"github.com/toolgate/toolgate/monitor/tracing"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/storeurl"
)

// mcpTelemetry is what `toolgate mcp` records beside its calls: spans as
// telemetry: asks (a stdout exporter writes to stderr, since stdout carries
// the protocol), and stats buckets flushed to the store so that `toolgate
// stats` counts stdio sessions. The store is opened as before (crash
// recovery only when no other process serves the SQLite file, so a
// `toolgate mcp` still runs beside a `toolgate serve`); the stats go
// through it like the rows, under this process's own replica name. There
// are no Prometheus metrics: nothing serves /metrics on stdio.
type mcpTelemetry struct {
	owner    string
	store    store.Store
	agg      *stats.Aggregator
	tracer   trace.Tracer
	shutdown func(context.Context) error
}

func openMCPTelemetry(ctx context.Context, cfg *config.Config, stderr io.Writer, log *slog.Logger) (*mcpTelemetry, error) {
	t := &mcpTelemetry{owner: toolgate.DefaultOwner()}
	st, err := storeurl.Open(ctx, cfg.Store, storeurl.Options{Owner: t.owner, Recover: true})
	if err != nil {
		return nil, err
	}
	t.store = st
	t.agg, err = stats.New(ctx, &stats.Config{Store: st, Tools: cfg, Replica: t.owner, Logger: log})
	if err != nil {
		st.Close()
		return nil, err
	}
	tp, shutdown, err := tracing.Setup(ctx, cfg.Telemetry, stderr)
	if err != nil {
		t.agg.Close(ctx)
		st.Close()
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	tracing.LogErrors(log)
	t.tracer, t.shutdown = tracing.Tracer(tp), shutdown
	return t, nil
}

// close saves the last stats buckets, flushes the spans and closes the
// store. The gateway must be closed first.
func (t *mcpTelemetry) close(ctx context.Context, log *slog.Logger) {
	if err := t.agg.Close(ctx); err != nil {
		log.Error("saving the last stats buckets", "err", err)
	}
	if err := t.shutdown(ctx); err != nil {
		log.Error("flushing traces", "err", err)
	}
	if err := t.store.Close(); err != nil {
		log.Error("closing the store", "err", err)
	}
}
