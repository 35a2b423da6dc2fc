package stats

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/types"
)

// notifyingStore tells a channel about every SaveStats.
type notifyingStore struct {
	store.Store
	saved chan []store.StatsBucket
}

func (s *notifyingStore) SaveStats(ctx context.Context, b []store.StatsBucket) error {
	err := s.Store.SaveStats(ctx, b)
	s.saved <- b
	return err
}

func TestBackgroundFlushAndClose(t *testing.T) {
	clk := newClock()
	st := &notifyingStore{Store: newStore(t, "memory", clk), saved: make(chan []store.StatsBucket, 4)}
	ticks := make(chan time.Time)
	agg, err := newAggregator(t.Context(), &Config{Store: st, Replica: "r", Clock: clk, Logger: slog.New(slog.DiscardHandler)}, ticks)
	if err != nil {
		t.Fatal(err)
	}
	agg.Record(row("get_order", t0, 12))
	ticks <- t0
	if got := <-st.saved; len(got) != 1 || got[0].Tool != "get_order" || got[0].Replica != "r" || !got[0].Start.Equal(t0) || got[0].Width != time.Minute {
		t.Fatalf("the tick saved %+v", got)
	}
	// Nothing changed: the next tick saves nothing.
	agg.Record(row("get_order", t0, 12))
	if err := agg.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := <-st.saved; len(got) != 1 {
		t.Fatalf("Close saved %d buckets, want the changed one", len(got))
	}
	// Close twice is fine; goleak (TestMain) checks the flusher ended.
	if err := agg.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	stored, _ := st.LoadStats(t.Context(), t0)
	a, err := decodeAggregate(stored[0].Data)
	if err != nil || a.calls != 2 {
		t.Fatalf("stored bucket: %+v, %v; want 2 calls", a, err)
	}
}

func TestBackgroundFlushFailureIsRetried(t *testing.T) {
	clk := newClock()
	st := &failingStore{Store: newStore(t, "memory", clk), fail: true, saved: make(chan error, 4)}
	ticks := make(chan time.Time)
	agg, err := newAggregator(t.Context(), &Config{Store: st, Replica: "r", Clock: clk, Logger: slog.New(slog.DiscardHandler)}, ticks)
	if err != nil {
		t.Fatal(err)
	}
	agg.Record(row("get_order", t0, 12))
	ticks <- t0
	if err := <-st.saved; err == nil {
		t.Fatal("the first save should fail")
	}
	st.setFail(false)
	if err := agg.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-st.saved; err != nil {
		t.Fatal(err)
	}
	if got, _ := st.LoadStats(t.Context(), t0); len(got) != 1 {
		t.Fatalf("the bucket whose save failed was not saved again: %d buckets", len(got))
	}
}

type failingStore struct {
	store.Store
	fail  bool
	saved chan error
}

func (s *failingStore) setFail(v bool) { s.fail = v } // only between saves

func (s *failingStore) SaveStats(ctx context.Context, b []store.StatsBucket) error {
	err := errors.New("disk full")
	if !s.fail {
		err = s.Store.SaveStats(ctx, b)
	}
	s.saved <- err
	return err
}

func TestLateRowsNeverReplaceASavedBucket(t *testing.T) {
	clk := newClock()
	st := newStore(t, "memory", clk)
	agg := newAgg(t, st, clk, "r", sketchOnly)
	for range 5 {
		agg.Record(row("get_order", t0, 10))
	}
	clk.Set(t0.Add(5 * time.Minute))
	if err := agg.Flush(t.Context()); err != nil { // saves, then drops it from memory
		t.Fatal(err)
	}
	if n := len(agg.snapshot(t0)); n != 0 {
		t.Fatalf("%d buckets still in memory, want the old one dropped", n)
	}
	agg.Record(row("get_order", t0.Add(10*time.Second), 10)) // late
	if err := agg.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	rep, err := agg.Query(t.Context(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Tools["get_order"].Calls; got != 6 {
		t.Fatalf("%d calls, want 6: the late row must not replace the saved bucket", got)
	}
}

func TestRestartUnderTheSameReplicaGoesOn(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			clk := newClock()
			st := newStore(t, kind, clk)
			first := newAgg(t, st, clk, "r", sketchOnly)
			for range 5 {
				first.Record(row("get_order", t0, 10))
			}
			if err := first.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			clk.Set(t0.Add(30 * time.Second))
			second := newAgg(t, st, clk, "r", sketchOnly)
			for range 3 {
				second.Record(row("get_order", t0.Add(20*time.Second), 10))
			}
			if err := second.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			rep, err := newAgg(t, st, clk, "reader", sketchOnly).Query(t.Context(), time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Tools["get_order"].Calls; got != 8 {
				t.Fatalf("%d calls, want 8: the restarted process must add to its bucket, not replace it", got)
			}
		})
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	a := newAggregate()
	r := rand.New(rand.NewPCG(1, 2))
	for k := range 1000 {
		x := row("issue_refund", t0, r.ExpFloat64()*100)
		if k%7 == 0 {
			x = failed("issue_refund", t0, 5, types.CodeTimeoutUnknownOutcome)
			x.Retries, x.Attempts = 2, 3
		}
		x.InputTokens, x.OutputTokens = int64(k), 3
		a.add(x)
	}
	a.add(row("issue_refund", t0, 0)) // a zero latency
	data := a.encode(nil)
	b, err := decodeAggregate(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.encode(nil), data) {
		t.Fatal("decode(encode(a)) encodes differently")
	}
	if b.calls != 1001 || b.errors != 143 || b.retries != 286 || b.codes[types.CodeTimeoutUnknownOutcome] != 143 ||
		b.inputTokens != 499500 || b.dependency != "payments" || b.latency.count != 1001 || b.latency.zero != 1 {
		t.Fatalf("decoded %+v", b)
	}
	for _, q := range []float64{0.5, 0.95, 0.99} {
		if a.latency.quantile(q) != b.latency.quantile(q) {
			t.Errorf("p%v differs after a round trip", q*100)
		}
	}
	// A cut in the counters fails; a cut anywhere never panics.
	header := len(data) - len(a.latency.encode(nil))
	for n := range len(data) - 1 {
		if _, err := decodeAggregate(data[:n]); err == nil && n < header {
			t.Errorf("a bucket cut at %d bytes (in the counters) decoded", n)
		}
	}
	if _, err := decodeAggregate(append([]byte{9}, data[1:]...)); err == nil {
		t.Error("an unknown version decoded")
	}
}

func FuzzDecodeAggregate(f *testing.F) {
	a := newAggregate()
	a.add(row("t", t0, 12))
	a.add(failed("t", t0, 1200, types.CodeUpstreamError))
	f.Add(a.encode(nil))
	f.Add([]byte{1})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := decodeAggregate(data)
		if err != nil {
			return
		}
		// Whatever decodes can be queried and encoded again.
		_ = b.latency.quantile(0.99)
		_ = b.encode(nil)
	})
}

// TestMergeEncodedIsAllOrNothing merges damaged copies of a bucket into an
// accumulator whose bins already cover it (mergeEncoded's fast path, which
// adds bins as it decodes them) and into an empty one (the general path): a
// copy that does not decode leaves the accumulator as it was; one that
// decodes adds exactly what decodeAggregate reads from it.
func TestMergeEncodedIsAllOrNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	bucket := func(n int) *aggregate {
		a := newAggregate()
		for k := range n {
			x := row("issue_refund", t0, wideLatency(r))
			if k%5 == 0 {
				x = failed("issue_refund", t0, wideLatency(r), types.CodeUpstreamError)
			}
			a.add(x)
		}
		return a
	}
	wide := bucket(5000)
	data := bucket(300).encode(nil)
	zeros := newAggregate()
	zeros.add(row("issue_refund", t0, 0))
	for _, d := range [][]byte{append(bytes.Clone(data), 0), append(zeros.encode(nil), 0)} {
		acc := wide.clone()
		if err := acc.mergeEncoded(d); err == nil || !bytes.Equal(acc.encode(nil), wide.encode(nil)) || acc.latency.count != wide.latency.count {
			t.Fatalf("a bucket with a byte after its sketch merged (%v) or changed the accumulator", err)
		}
	}
	for trial := range 3000 {
		d := bytes.Clone(data)
		switch trial % 3 {
		case 0:
			d[r.IntN(len(d))] = byte(r.Uint32())
		case 1:
			d = d[:r.IntN(len(d))]
		default:
			d[r.IntN(len(d))] ^= 0x80 // a varint's continuation bit
		}
		for _, acc := range []*aggregate{wide.clone(), newAggregate()} {
			before, count := acc.encode(nil), acc.latency.count
			want := acc.clone()
			err := acc.mergeEncoded(d)
			if err != nil {
				if !bytes.Equal(acc.encode(nil), before) || acc.latency.count != count {
					t.Fatalf("trial %d: a bucket that does not decode (%v) changed the accumulator", trial, err)
				}
				continue
			}
			decoded, err := decodeAggregate(d)
			if err != nil {
				t.Fatalf("trial %d: merges but does not decode: %v", trial, err)
			}
			want.merge(decoded)
			if !bytes.Equal(acc.encode(nil), want.encode(nil)) || acc.latency.count != want.latency.count {
				t.Fatalf("trial %d: merging the encoding differs from merging its decoding", trial)
			}
		}
	}
}

// TestBucketMemoryIsBounded records a million latencies spread from 0.1 ms
// to a minute in one bucket: the sketch stays within its bin cap.
func TestBucketMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a million adds")
	}
	a := newAggregate()
	r := rand.New(rand.NewPCG(5, 5))
	for range 1_000_000 {
		a.add(row("t", t0, wideLatency(r)))
	}
	bins := len(a.latency.bins)
	encoded := len(a.encode(nil))
	t.Logf("1M latencies: %d bins (cap %d), %d bytes in memory, %d bytes encoded", bins, MaxBins, 8*cap(a.latency.bins), encoded)
	if bins > MaxBins || encoded > 6*MaxBins+256 {
		t.Fatalf("%d bins, %d bytes: not bounded", bins, encoded)
	}
}

// wideLatency is a log-uniform latency from 0.1 ms to 60 s.
func wideLatency(r *rand.Rand) float64 { return 0.1 * mathExp(r.Float64()*13.3) }
