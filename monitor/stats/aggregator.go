package stats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/breaker"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/internal/clock"
	"github.com/toolgate/toolgate/monitor"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// Defaults of Config.
const (
	// DefaultWidth is the default time bucket.
	DefaultWidth = time.Minute
	// DefaultFlushInterval is how often buckets are saved by default.
	DefaultFlushInterval = 10 * time.Second
	// DefaultExactRows is the default of Config.ExactRows.
	DefaultExactRows = 10_000
)

// Config configures an Aggregator. Every zero value is a documented default.
type Config struct {
	// Store keeps the flushed buckets and the execution rows. Required.
	Store store.Store
	// Tools gives each tool's read timeout and verify read. Optional:
	// without it timeout_ms is 0 and timeout_pressure false.
	Tools *config.Config
	// LiveTools, when set and not nil, is read instead of Tools at each
	// query: the gateway's current tools, which change when an MCP server
	// that tools are imported from changes its list. Optional.
	LiveTools func() *config.Config
	// Replica names this process's buckets in the store: give it the
	// pipeline's Owner(). Two processes running at once must not share a
	// name (each would replace the other's buckets); a process restarting
	// under its old name goes on from its saved buckets. Default:
	// hostname-pid.
	Replica string
	// Width is the time bucket. Default one minute.
	Width time.Duration
	// FlushInterval is how often buckets are saved to the store. Default
	// 10s; negative means never in the background (Flush and Close still
	// save), which is what a read-only user such as the CLI wants.
	FlushInterval time.Duration
	// ExactRows is the most calls a window may hold for its figures to be
	// computed exactly from the rows. Default 10,000; negative means always
	// use the sketches.
	ExactRows int
	// Clock tells the time of rows without one and of queries. Default:
	// the wall clock.
	Clock clock.Clock
	// Breakers returns the circuit breakers' states, for the breaker_open
	// alert (pipeline.Pipeline.Breakers). Optional.
	Breakers func() []breaker.Snapshot
	// Logger receives background flush failures. Default: slog.Default().
	Logger *slog.Logger
}

// Aggregator is a monitor.Sink that keeps per-(tool, bucket) figures and
// saves them to the store. It is safe for concurrent use. Open it with New
// and end it with Close.
type Aggregator struct {
	cfg   Config
	tools atomic.Pointer[config.Config] // cfg.Tools, or the config SetTools gave

	mu      sync.Mutex
	buckets map[bucketKey]*liveBucket
	// floor is the start of the newest bucket that was dropped from memory
	// (or may be in the store from an earlier process): a late row for it
	// or an older bucket is counted in the bucket after it, so that a
	// flush never replaces a stored bucket with a partial one.
	floor time.Time

	flushMu sync.Mutex // one flush at a time, so saves land in order

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

var _ monitor.Sink = (*Aggregator)(nil)

// SetTools replaces the config that gives each tool's read timeout and
// verify read (a reloaded config): the figures of every query from now on
// compare with the new timeouts. The counted calls are kept.
func (a *Aggregator) SetTools(cfg *config.Config) { a.tools.Store(cfg) }

type bucketKey struct {
	tool  string
	start int64 // unix nanoseconds
}

// liveBucket is an in-memory bucket and how much of it the store has.
type liveBucket struct {
	agg     *aggregate
	gen     uint64 // bumped by every row
	savedAt uint64 // the gen last saved
}

// New makes an aggregator and, unless cfg.FlushInterval is negative, starts
// its background flusher. It reads back this replica's recent buckets from
// the store, so that a process restarting under the same replica name goes
// on from them instead of overwriting them.
func New(ctx context.Context, cfg *Config) (*Aggregator, error) {
	return newAggregator(ctx, cfg, nil)
}

// newAggregator is New with the flusher's ticks injected (tests).
func newAggregator(ctx context.Context, cfg *Config, ticks <-chan time.Time) (*Aggregator, error) {
	if cfg == nil || cfg.Store == nil {
		return nil, errors.New("stats: Config.Store is required")
	}
	c := *cfg
	if c.Replica == "" {
		host, _ := os.Hostname()
		c.Replica = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if c.Width <= 0 {
		c.Width = DefaultWidth
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.ExactRows == 0 {
		c.ExactRows = DefaultExactRows
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	a := &Aggregator{cfg: c, buckets: map[bucketKey]*liveBucket{}}
	a.tools.Store(c.Tools)
	if err := a.resume(ctx); err != nil {
		return nil, err
	}
	if c.FlushInterval > 0 || ticks != nil {
		a.stop, a.done = make(chan struct{}), make(chan struct{})
		var ticker *time.Ticker
		if ticks == nil {
			ticker = time.NewTicker(c.FlushInterval)
			ticks = ticker.C
		}
		go a.loop(ticks, ticker)
	}
	return a, nil
}

// resume loads this replica's buckets that are still held in memory by a
// running process (the current and the previous one).
func (a *Aggregator) resume(ctx context.Context) error {
	from := a.bucketStart(a.cfg.Clock.Now()).Add(-a.retain())
	a.floor = from.Add(-a.cfg.Width)
	stored, err := a.cfg.Store.LoadStats(ctx, from)
	if err != nil {
		return fmt.Errorf("stats: resume: %w", err)
	}
	for _, b := range stored {
		if b.Replica != a.cfg.Replica || b.Width != a.cfg.Width {
			continue
		}
		agg, err := decodeAggregate(b.Data)
		if err != nil {
			continue // an unreadable bucket is replaced by the next flush
		}
		a.buckets[bucketKey{b.Tool, b.Start.UnixNano()}] = &liveBucket{agg: agg}
	}
	return nil
}

// retain is how long a saved bucket stays in memory after it ends: late
// rows still land in it.
func (a *Aggregator) retain() time.Duration { return max(a.cfg.Width, a.cfg.FlushInterval) }

// bucketStart is the start of the bucket holding t.
func (a *Aggregator) bucketStart(t time.Time) time.Time { return t.Truncate(a.cfg.Width).UTC() }

// Replica is the name of this aggregator's buckets in the store.
func (a *Aggregator) Replica() string { return a.cfg.Replica }

// Record counts one committed execution row. It implements monitor.Sink.
// A row without FinishedAt is counted at the aggregator's now.
func (a *Aggregator) Record(row *types.Execution) {
	at := row.FinishedAt
	if at.IsZero() {
		at = a.cfg.Clock.Now()
	}
	start := a.bucketStart(at)
	tool := toolOf(row)

	a.mu.Lock()
	defer a.mu.Unlock()
	if !start.After(a.floor) {
		start = a.floor.Add(a.cfg.Width)
	}
	key := bucketKey{tool, start.UnixNano()}
	b := a.buckets[key]
	if b == nil {
		b = &liveBucket{agg: newAggregate()}
		a.buckets[key] = b
	}
	b.agg.add(row)
	b.gen++
}

// Flush saves every bucket that changed since the last flush, then drops
// from memory the saved buckets that ended long enough ago.
func (a *Aggregator) Flush(ctx context.Context) error {
	a.flushMu.Lock()
	defer a.flushMu.Unlock()

	type pending struct {
		key bucketKey
		gen uint64
	}
	var (
		out  []store.StatsBucket
		gens []pending
	)
	a.mu.Lock()
	for k, b := range a.buckets {
		if b.gen == b.savedAt {
			continue
		}
		out = append(out, store.StatsBucket{Tool: k.tool, Start: time.Unix(0, k.start).UTC(),
			Width: a.cfg.Width, Replica: a.cfg.Replica, Data: b.agg.encode(nil)})
		gens = append(gens, pending{k, b.gen})
	}
	a.mu.Unlock()

	if len(out) > 0 {
		if err := a.cfg.Store.SaveStats(ctx, out); err != nil {
			return fmt.Errorf("stats: flush: %w", err)
		}
	}

	now := a.cfg.Clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range gens {
		if b := a.buckets[p.key]; b != nil {
			b.savedAt = p.gen
		}
	}
	for k, b := range a.buckets {
		start := time.Unix(0, k.start)
		if b.gen == b.savedAt && !start.Add(a.cfg.Width+a.retain()).After(now) {
			delete(a.buckets, k)
			if start.After(a.floor) {
				a.floor = start.UTC()
			}
		}
	}
	return nil
}

// loop flushes on every tick until Close.
func (a *Aggregator) loop(ticks <-chan time.Time, ticker *time.Ticker) {
	defer close(a.done)
	if ticker != nil {
		defer ticker.Stop()
	}
	for {
		select {
		case <-a.stop:
			return
		case <-ticks:
			ctx, cancel := context.WithTimeout(context.Background(), a.flushTimeout())
			if err := a.Flush(ctx); err != nil && !errors.Is(err, store.ErrClosed) {
				a.cfg.Logger.Warn("stats flush failed; will retry", "err", err)
			}
			cancel()
		}
	}
}

// flushTimeout bounds one background flush.
func (a *Aggregator) flushTimeout() time.Duration {
	return max(a.cfg.FlushInterval, 5*time.Second)
}

// Close stops the background flusher and saves what is left. Rows recorded
// after Close are counted in memory but never saved.
func (a *Aggregator) Close(ctx context.Context) error {
	a.closeOnce.Do(func() {
		if a.stop != nil {
			close(a.stop)
			<-a.done
		}
	})
	return a.Flush(ctx)
}

// snapshot returns copies of the in-memory buckets that start at or after
// from.
func (a *Aggregator) snapshot(from time.Time) map[bucketKey]*aggregate {
	from = from.UTC()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[bucketKey]*aggregate, len(a.buckets))
	for k, b := range a.buckets {
		if k.start >= from.UnixNano() {
			out[k] = b.agg.clone()
		}
	}
	return out
}
