// Package metrics exposes toolgate's figures to Prometheus: a monitor.Sink
// that counts calls, attempts, retries, replays and unknown outcomes per
// tool and observes their durations; the state of each circuit breaker; the
// store's commit latency (InstrumentStore); and the Go runtime and process
// collectors. Everything is registered on the Metrics' own registry, served
// by Handler at GET /metrics.
//
// The metrics:
//
//	toolgate_calls_total{tool,code,class}           counter: class = ok | refused | dependency_error | replayed_error
//	toolgate_call_duration_seconds{tool}            histogram, 5 ms to 60 s: calls that sent an attempt
//	toolgate_attempts_total{tool,purpose}           counter: requests sent, purpose = call | owner | verify
//	toolgate_retries_total{tool}                    counter
//	toolgate_replays_total{tool}                    counter
//	toolgate_unknown_outcomes_total{tool}           counter
//	toolgate_breaker_state{dependency}              gauge: 0 closed, 1 half-open, 2 open
//	toolgate_store_commit_duration_seconds{op}      histogram, op = commit | begin_operation | admit_and_begin
//	toolgate_quota_keys{quota}                      gauge: keys with use inside the window
//	toolgate_quota_max_used_ratio{quota}            gauge: the fullest key's used / limit
//	go_*, process_*                                 the runtime and process collectors
//
// toolgate_attempts_total counts every request sent to a dependency as it
// ends (the pipeline tells Metrics through monitor.AttemptSink), the
// ownership and verify lookups included: those are labelled with the lookup
// tool and purpose="owner" or "verify", a tool's own attempts with
// purpose="call".
//
// The class of toolgate_calls_total splits the failures (monitor.ClassOf):
// class="refused" are the calls toolgate answered without sending anything
// (validation, permission, rule, approval, quota, unknown tool, an open
// breaker), class="dependency_error" those that reached the dependency and
// failed there. A refusal is not observed in
// toolgate_call_duration_seconds either: it took no time at the
// dependency, and counting it would pull the latency quantiles down.
//
// With Config.Tools, every counter has a series per configured tool from
// the start, at zero (calls with code="ok"; attempts with purpose="call",
// and "owner"/"verify" for the tools used as lookups), so that an alert on
// a rate sees 0 rather than nothing. With Config.LiveTools, so have the
// tools imported from MCP servers and OpenAPI documents, declared at each
// scrape as they come and go.
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

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/monitor"
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
	// Tools, when set, gives every counter a zero series per tool from
	// the start (see Declare). Optional.
	Tools *config.Config
	// NoRuntime leaves out the Go runtime and process collectors (tests
	// that compare the whole output).
	NoRuntime bool
	// Quotas returns the quota keys' use, read at each scrape. Optional:
	// without it the quota gauges have no series.
	Quotas func() []QuotaUse
	// LiveTools returns the gateway's current tools, imported ones
	// included, read at each scrape to give them their zero series.
	// Optional; it may return nil.
	LiveTools func() *config.Config
}

// Metrics holds toolgate's collectors on their own registry. It is a
// monitor.Sink and safe for concurrent use.
type Metrics struct {
	registry  *prometheus.Registry
	liveTools func() *config.Config

	calls         *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	attempts      *prometheus.CounterVec
	retries       *prometheus.CounterVec
	replays       *prometheus.CounterVec
	unknown       *prometheus.CounterVec
	storeDuration *prometheus.HistogramVec
}

var (
	_ monitor.Sink        = (*Metrics)(nil)
	_ monitor.AttemptSink = (*Metrics)(nil)
)

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
		registry:  prometheus.NewRegistry(),
		liveTools: cfg.LiveTools,
		calls: counter("toolgate_calls_total", "Tool calls, by tool, outcome code (ok for successes) and class: ok, refused (by toolgate, nothing sent), dependency_error (failed at the dependency) or replayed_error.",
			"tool", "code", "class"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolgate_call_duration_seconds",
			Help:    "Time from a call's admission to its committed result, every attempt and backoff included, for the calls that sent at least one attempt.",
			Buckets: CallBuckets,
		}, []string{"tool"}),
		attempts: counter("toolgate_attempts_total", "Requests sent to dependencies: a tool's attempts (purpose call) and its ownership and verify lookups (purpose owner, verify, under the lookup tool).", "tool", "purpose"),
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
	if cfg.Tools != nil {
		m.Declare(cfg.Tools)
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
// With Config.LiveTools, the current tools get their zero series first.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
	if m.liveTools == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cfg := m.liveTools(); cfg != nil {
			m.Declare(cfg)
		}
		h.ServeHTTP(w, r)
	})
}

// Record counts one committed execution row. It implements monitor.Sink.
func (m *Metrics) Record(row *types.Execution) {
	tool := row.Tool
	if row.Code == types.CodeUnknownTool || tool == "" {
		tool = UnknownTool
	}
	m.calls.WithLabelValues(tool, string(row.Code), string(monitor.ClassOf(row))).Inc()
	if row.Attempts > 0 {
		m.duration.WithLabelValues(tool).Observe(max(row.LatencyMS, 0) / 1000)
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

// RecordAttempt counts one request sent to a dependency. It implements
// monitor.AttemptSink.
func (m *Metrics) RecordAttempt(tool string, purpose monitor.Purpose) {
	m.attempts.WithLabelValues(tool, string(purpose)).Inc()
}

// Declare makes the zero series of cfg's tools: per tool, calls with
// code="ok" (class="ok"), attempts with purpose="call", retries, replays and unknown
// outcomes; attempts with purpose="owner" or "verify" for each tool used as
// such a lookup; and calls of unknown tools. Series already counting keep
// their values. Call it again with a new config to add its tools.
func (m *Metrics) Declare(cfg *config.Config) {
	m.calls.WithLabelValues(UnknownTool, string(types.CodeUnknownTool), string(monitor.ClassRefused))
	for name, spec := range cfg.Tools {
		m.calls.WithLabelValues(name, string(types.CodeOK), string(monitor.ClassOK))
		m.attempts.WithLabelValues(name, string(monitor.PurposeCall))
		m.retries.WithLabelValues(name)
		m.replays.WithLabelValues(name)
		m.unknown.WithLabelValues(name)
		if spec.Owner != nil && spec.Owner.Lookup != "" {
			m.attempts.WithLabelValues(spec.Owner.Lookup, string(monitor.PurposeOwner))
		}
		if spec.Verify != nil && spec.Verify.Lookup != "" {
			m.attempts.WithLabelValues(spec.Verify.Lookup, string(monitor.PurposeVerify))
		}
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
