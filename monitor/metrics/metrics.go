// Package metrics exposes toolgate's figures to Prometheus: a pipeline.Sink
// that counts calls, attempts, retries, replays and unknown outcomes per
// tool and observes their durations; the state of each circuit breaker; the
// store's commit latency (InstrumentStore); and the Go runtime and process
// collectors. Everything is registered on the Metrics' own registry, served
// by Handler at GET /metrics.
//
// The metrics:
//
//	toolgate_calls_total{tool,code}                 counter
//	toolgate_call_duration_seconds{tool}            histogram, 5 ms to 60 s
//	toolgate_attempts_total{tool}                   counter
//	toolgate_retries_total{tool}                    counter
//	toolgate_replays_total{tool}                    counter
//	toolgate_unknown_outcomes_total{tool}           counter
//	toolgate_breaker_state{dependency}              gauge: 0 closed, 1 half-open, 2 open
//	toolgate_store_commit_duration_seconds{op}      histogram, op = commit | begin_operation
//	toolgate_quota_keys{quota}                      gauge: keys with use inside the window
//	toolgate_quota_max_used_ratio{quota}            gauge: the fullest key's used / limit
//	go_*, process_*                                 the runtime and process collectors
//
// Calls of tools that do not exist (code unknown_tool) are counted under
// tool="(unknown tool)", so that a model inventing names cannot grow the
// number of series without bound.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolgate/toolgate/execute/breaker"
	"github.com/toolgate/toolgate/pipeline"
	"github.com/toolgate/toolgate/types"
)

// UnknownTool is the tool label of calls of tools that do not exist.
const UnknownTool = "(unknown tool)"

// Config configures Metrics. Every zero value is a documented default.
type Config struct {
	// Breakers returns the circuit breakers' states, read at each scrape
	// (pipeline.Pipeline.Breakers). Optional: without it
	// toolgate_breaker_state has no series.
	Breakers func() []breaker.Snapshot
	// NoRuntime leaves out the Go runtime and process collectors (tests
	// that compare the whole output).
	NoRuntime bool
	// Quotas returns the quota keys' use, read at each scrape. Optional:
	// without it the quota gauges have no series.
	Quotas func() []QuotaUse
}

// Metrics holds toolgate's collectors on their own registry. It is a
// pipeline.Sink and safe for concurrent use.
type Metrics struct {
	registry *prometheus.Registry

	calls         *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	attempts      *prometheus.CounterVec
	retries       *prometheus.CounterVec
	replays       *prometheus.CounterVec
	unknown       *prometheus.CounterVec
	storeDuration *prometheus.HistogramVec
}

var _ pipeline.Sink = (*Metrics)(nil)

// CallBuckets are the bounds (seconds) of toolgate_call_duration_seconds:
// from 5 ms to the longest read timeout one would set.
var CallBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60}

// StoreBuckets are the bounds (seconds) of
// toolgate_store_commit_duration_seconds: from 0.5 ms to 2.5 s.
var StoreBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// New makes the collectors and registers them on a new registry.
func New(cfg Config) *Metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		calls:    counter("toolgate_calls_total", "Tool calls, by tool and outcome code (ok for successes).", "tool", "code"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolgate_call_duration_seconds",
			Help:    "Time from a call's admission to its committed result, every attempt and backoff included.",
			Buckets: CallBuckets,
		}, []string{"tool"}),
		attempts: counter("toolgate_attempts_total", "Attempts sent to dependencies.", "tool"),
		retries:  counter("toolgate_retries_total", "Attempts after the first of a call.", "tool"),
		replays:  counter("toolgate_replays_total", "Calls answered from the ledger without executing again.", "tool"),
		unknown:  counter("toolgate_unknown_outcomes_total", "Calls whose side effect is unknown: a write that may have happened.", "tool"),
		storeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolgate_store_commit_duration_seconds",
			Help:    "Time of durable store writes: a call's commit, or an operation's begin.",
			Buckets: StoreBuckets,
		}, []string{"op"}),
	}
	m.registry.MustRegister(m.calls, m.duration, m.attempts, m.retries, m.replays, m.unknown, m.storeDuration)
	if cfg.Breakers != nil {
		m.registry.MustRegister(&breakerCollector{snapshots: cfg.Breakers})
	}
	if cfg.Quotas != nil {
		m.registry.MustRegister(&quotaCollector{uses: cfg.Quotas})
	}
	if !cfg.NoRuntime {
		m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// Registry is the registry the collectors are on (to add more, or to
// gather in tests).
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Handler serves the registry in the Prometheus text format (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Record counts one committed execution row. It implements pipeline.Sink.
func (m *Metrics) Record(row *types.Execution) {
	tool := row.Tool
	if row.Code == types.CodeUnknownTool || tool == "" {
		tool = UnknownTool
	}
	m.calls.WithLabelValues(tool, string(row.Code)).Inc()
	m.duration.WithLabelValues(tool).Observe(max(row.LatencyMS, 0) / 1000)
	if row.Attempts > 0 {
		m.attempts.WithLabelValues(tool).Add(float64(row.Attempts))
	}
	if row.Retries > 0 {
		m.retries.WithLabelValues(tool).Add(float64(row.Retries))
	}
	if row.Replayed {
		m.replays.WithLabelValues(tool).Inc()
	}
	if row.SideEffect == types.SideEffectUnknown {
		m.unknown.WithLabelValues(tool).Inc()
	}
}

// breakerCollector reads the breakers' states at each scrape.
type breakerCollector struct {
	snapshots func() []breaker.Snapshot
}

var breakerDesc = prometheus.NewDesc("toolgate_breaker_state",
	"Circuit breaker state per dependency: 0 closed, 1 half-open, 2 open.", []string{"dependency"}, nil)

// Describe implements prometheus.Collector.
func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- breakerDesc }

// Collect implements prometheus.Collector.
func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.snapshots() {
		ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, BreakerValue(s.State), s.Name)
	}
}

// BreakerValue is the gauge value of a breaker state: 0 closed, 1
// half-open, 2 open.
func BreakerValue(s breaker.State) float64 {
	switch s {
	case breaker.HalfOpen:
		return 1
	case breaker.Open:
		return 2
	}
	return 0
}
