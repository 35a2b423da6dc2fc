package stats

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/types"
)

// AlertKind names what an alert is about.
type AlertKind string

// The alert kinds, in the order Alerts lists them.
const (
	// AlertUnknownOutcomes: writes whose outcome is unknown wait for a
	// verify read (or a person).
	AlertUnknownOutcomes AlertKind = "unknown_outcomes"
	// AlertBreakerOpen: a dependency's circuit breaker is open.
	AlertBreakerOpen AlertKind = "breaker_open"
	// AlertErrorRateJump: a tool's error rate over the last JumpWindow is
	// at least JumpFactor times that of the BaselineWindow before, and at
	// least JumpMinRate, over at least AlertMinCalls calls.
	AlertErrorRateJump AlertKind = "error_rate_jump"
	// AlertTimeoutPressure: a tool's p95 over the last PressureWindow is
	// at least 0.8 × its read timeout, over at least AlertMinCalls calls.
	AlertTimeoutPressure AlertKind = "timeout_pressure"
)

// The thresholds of the alerts.
const (
	JumpWindow     = 5 * time.Minute
	BaselineWindow = time.Hour
	JumpFactor     = 2.0
	JumpMinRate    = 0.10
	PressureWindow = time.Hour
	AlertMinCalls  = 20
	// maxUnknownListed bounds the unknown operations read for one alert.
	maxUnknownListed = 1000
)

var kindOrder = []AlertKind{AlertUnknownOutcomes, AlertBreakerOpen, AlertErrorRateJump, AlertTimeoutPressure}

// Alert is one condition worth a person's attention, said in plain words.
type Alert struct {
	Kind       AlertKind `json:"kind"`
	Tool       string    `json:"tool,omitempty"`
	Dependency string    `json:"dependency,omitempty"`
	// Message says what is wrong and what it means, in plain words.
	Message string `json:"message"`
	// Since is when the condition was first seen (as far as the data
	// goes back).
	Since time.Time `json:"since"`
}

// Alerts returns the current alerts, most pressing kind first.
func (a *Aggregator) Alerts(ctx context.Context) ([]Alert, error) {
	now := a.cfg.Clock.Now()
	out, err := a.unknownAlerts(ctx)
	if err != nil {
		return nil, err
	}
	if a.cfg.Breakers != nil {
		out = append(out, breakerAlerts(a.cfg.Breakers())...)
	}
	recent, err := a.recentBuckets(ctx, now.Add(-JumpWindow-BaselineWindow))
	if err != nil {
		return nil, err
	}
	for tool, buckets := range recent {
		if al, ok := a.jumpAlert(tool, buckets, now); ok {
			out = append(out, al)
		}
		if al, ok := a.pressureAlert(tool, buckets, now); ok {
			out = append(out, al)
		}
	}
	out = a.visibleAlerts(ctx, out)
	slices.SortFunc(out, func(x, y Alert) int {
		return cmp.Or(cmp.Compare(slices.Index(kindOrder, x.Kind), slices.Index(kindOrder, y.Kind)),
			strings.Compare(x.Dependency, y.Dependency), strings.Compare(x.Tool, y.Tool))
	})
	return out, nil
}

// timedAggregate is one tool's merged bucket at a start time.
type timedAggregate struct {
	start time.Time
	agg   *aggregate
}

// recentBuckets returns, per tool, the buckets since from merged across
// replicas, oldest first.
func (a *Aggregator) recentBuckets(ctx context.Context, from time.Time) (map[string][]timedAggregate, error) {
	type key struct {
		tool  string
		start int64
	}
	merged := map[key]*aggregate{}
	err := a.sources(ctx, a.bucketStart(from), func(s *source) {
		k := key{s.tool, s.start.UnixNano()}
		acc := merged[k]
		if acc == nil {
			acc = newAggregate()
			merged[k] = acc
		}
		a.mergeSource(acc, s)
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]timedAggregate{}
	for k, agg := range merged {
		out[k.tool] = append(out[k.tool], timedAggregate{time.Unix(0, k.start).UTC(), agg})
	}
	for _, b := range out {
		slices.SortFunc(b, func(x, y timedAggregate) int { return x.start.Compare(y.start) })
	}
	return out, nil
}

// sum merges the buckets that start in [from, to).
func (a *Aggregator) sum(buckets []timedAggregate, from, to time.Time) *aggregate {
	acc := newAggregate()
	from, to = a.bucketStart(from), a.bucketStart(to)
	for _, b := range buckets {
		if !b.start.Before(from) && b.start.Before(to) {
			acc.merge(b.agg)
		}
	}
	return acc
}

func (a *Aggregator) jumpAlert(tool string, buckets []timedAggregate, now time.Time) (Alert, bool) {
	cut := now.Add(-JumpWindow)
	far := now.Add(a.cfg.Width) // past the bucket holding now
	last := a.sum(buckets, cut, far)
	before := a.sum(buckets, cut.Add(-BaselineWindow), cut)
	if last.calls < AlertMinCalls {
		return Alert{}, false
	}
	rate := float64(last.errors) / float64(last.calls)
	base := 0.0
	if before.calls > 0 {
		base = float64(before.errors) / float64(before.calls)
	}
	if rate < JumpMinRate || rate < JumpFactor*base {
		return Alert{}, false
	}
	since := a.bucketStart(cut)
	for _, b := range buckets {
		if !b.start.Before(since) && b.agg.errors > 0 {
			since = b.start
			break
		}
	}
	msg := fmt.Sprintf("%s errors jumped to %s of %d calls in the last %s (from %s over the hour before)",
		tool, percent(rate), last.calls, FormatWindow(JumpWindow), percent(base))
	if code, n := topError(last.codes); code != "" {
		msg += fmt.Sprintf("; most are %s (%d)", code, n)
	}
	return Alert{Kind: AlertErrorRateJump, Tool: tool, Dependency: last.dependency, Message: msg, Since: since}, true
}

// topError is the most frequent failure code.
func topError(codes map[types.Code]int64) (types.Code, int64) {
	var best types.Code
	var n int64
	for c, k := range codes {
		if c != types.CodeOK && (k > n || k == n && c < best) {
			best, n = c, k
		}
	}
	return best, n
}

func (a *Aggregator) pressureAlert(tool string, buckets []timedAggregate, now time.Time) (Alert, bool) {
	timeout := a.readTimeout(tool)
	if timeout <= 0 {
		return Alert{}, false
	}
	hour := a.sum(buckets, now.Add(-PressureWindow), now.Add(a.cfg.Width))
	p95 := hour.latency.quantile(0.95)
	if hour.samples < AlertMinCalls || !Pressure(p95, timeout) {
		return Alert{}, false
	}
	timeoutMS := float64(timeout.Milliseconds())
	var since time.Time
	first := a.bucketStart(now.Add(-PressureWindow))
	for _, b := range buckets {
		if b.start.Before(first) || b.agg.samples == 0 {
			continue
		}
		if since.IsZero() {
			since = b.start // the first bucket with calls, unless one crossed alone
		}
		if Pressure(b.agg.latency.quantile(0.95), timeout) {
			since = b.start
			break
		}
	}
	var msg string
	if p95 >= timeoutMS {
		msg = fmt.Sprintf("%s p95 is %s against a %s timeout: more than 1 in 20 calls runs out of time",
			tool, formatMS(p95), formatMS(timeoutMS))
	} else {
		msg = fmt.Sprintf("%s p95 is %s against a %s timeout: about 1 in 20 calls is within %s of timing out",
			tool, formatMS(p95), formatMS(timeoutMS), formatGap(timeoutMS-p95, timeoutMS))
	}
	msg += fmt.Sprintf("; a read timeout of %s would leave 50%% headroom over p99", formatMS(float64(SuggestTimeout(hour.latency.quantile(0.99)))))
	return Alert{Kind: AlertTimeoutPressure, Tool: tool, Dependency: hour.dependency, Message: msg, Since: since}, true
}

// breakerAlerts lists the open breakers.
func breakerAlerts(snaps []breaker.Snapshot) []Alert {
	var out []Alert
	for _, s := range snaps {
		if s.State != breaker.Open {
			continue
		}
		msg := fmt.Sprintf("%s circuit breaker is open after %d failures in a row: its tools fail at once with circuit_open and nothing is sent",
			s.Name, s.ConsecutiveFailures)
		if s.RetryIn > 0 {
			msg += fmt.Sprintf("; one probe goes through in %s", formatMS(float64(s.RetryIn.Milliseconds())))
		}
		out = append(out, Alert{Kind: AlertBreakerOpen, Dependency: s.Name, Message: msg, Since: s.OpenedAt})
	}
	return out
}

// unknownAlerts lists, per tool, the writes whose outcome is unknown.
func (a *Aggregator) unknownAlerts(ctx context.Context) ([]Alert, error) {
	ops, err := a.cfg.Store.ListOperations(ctx, types.OpUnknown, maxUnknownListed)
	if err != nil {
		return nil, fmt.Errorf("stats: alerts: %w", err)
	}
	type group struct {
		n     int
		since time.Time
	}
	groups := map[string]*group{}
	for _, op := range ops {
		g := groups[op.Tool]
		if g == nil {
			g = &group{}
			groups[op.Tool] = g
		}
		g.n++
		if at := cmp.Or(op.UpdatedAt, op.CreatedAt); g.since.IsZero() || at.Before(g.since) {
			g.since = at
		}
	}
	var out []Alert
	for tool, g := range groups {
		count := strconv.Itoa(g.n)
		if len(ops) == maxUnknownListed {
			count = "at least " + count
		}
		calls := "calls have"
		if g.n == 1 {
			calls = "call has"
		}
		msg := fmt.Sprintf("%s %s %s an unknown outcome", count, tool, calls)
		dep := ""
		if t := a.toolConfig(tool); t != nil {
			dep = t.Dependency
			if t.Verify != nil {
				msg += fmt.Sprintf(" waiting for verify with %s: it may have happened; its next call checks before anything is sent again", t.Verify.Lookup)
			} else {
				msg += fmt.Sprintf(": it may have happened, and %s has no verify read, so a person must check %s", tool, cmp.Or(dep, "the dependency"))
			}
		}
		out = append(out, Alert{Kind: AlertUnknownOutcomes, Tool: tool, Dependency: dep, Message: msg, Since: g.since.UTC()})
	}
	return out, nil
}

// percent writes a rate as a whole percentage ("35%"), or with one decimal
// below 10% ("2.5%").
func percent(r float64) string {
	p := r * 100
	if p < 10 && p != math.Trunc(p) {
		return strconv.FormatFloat(math.Round(p*10)/10, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(p), 'f', -1, 64) + "%"
}

// formatGap writes a difference in the unit of the figure it is taken
// from: "0.4 s" against a 5 s timeout, "40 ms" otherwise.
func formatGap(ms, of float64) string {
	if of >= 1000 && ms >= 100 {
		return strconv.FormatFloat(math.Round(ms/100)/10, 'f', -1, 64) + " s"
	}
	return formatMS(ms)
}

// formatMS writes a latency for people: "850 ms", "4.6 s", "5 s", "12 s".
func formatMS(ms float64) string {
	if ms < 1000 {
		return strconv.FormatFloat(math.Round(ms), 'f', -1, 64) + " ms"
	}
	s := ms / 1000
	if s < 10 {
		return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(math.Round(s), 'f', -1, 64) + " s"
}

// visibleAlerts keeps the alerts ctx's caller may see (WithVisible): those
// of its tools, and those of a dependency one of its tools uses.
func (a *Aggregator) visibleAlerts(ctx context.Context, alerts []Alert) []Alert {
	if ctx.Value(visibleKey{}) == nil {
		return alerts
	}
	visible := visibleIn(ctx)
	uses := func(dep string) bool {
		cfg := a.tools.Load()
		if a.cfg.LiveTools != nil {
			cfg = cmp.Or(a.cfg.LiveTools(), cfg)
		}
		if cfg == nil {
			return false
		}
		for name, t := range cfg.Tools {
			if t != nil && t.Dependency == dep && visible(name) {
				return true
			}
		}
		return false
	}
	return slices.DeleteFunc(alerts, func(al Alert) bool {
		if al.Tool != "" {
			return !visible(al.Tool)
		}
		return !uses(al.Dependency)
	})
}
