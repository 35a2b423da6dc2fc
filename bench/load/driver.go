package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// target is one path under load: how to make its request and how to tell
// a good answer.
type target struct {
	path Path
	// request makes the request of worker w's n-th call.
	request func(ctx context.Context, w int, n int64) (*http.Request, error)
	// good says the answer is a success of this path.
	good func(status int, body []byte) bool
}

// segment is what one (path, concurrency) segment measured.
type segment struct {
	requests int
	errors   int
	elapsed  time.Duration
	// latencies of the successful requests.
	latencies []time.Duration
	firstErr  string
	// cpu is the path's servers' CPU over the segment.
	cpu cpuSample
}

// drive sends requests from workers goroutines, each waiting for its
// answer before the next (closed loop), for d.
func drive(ctx context.Context, cl *http.Client, t *target, workers int, d time.Duration, seq *atomic.Int64) segment {
	results := make([]workerResult, workers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	var deadline time.Time
	for w := range workers {
		wg.Go(func() {
			r := &results[w]
			// Allocated before the start, not while measured.
			r.lat, r.buf = make([]time.Duration, 0, 4096), bytes.NewBuffer(make([]byte, 0, 4096))
			<-start
			r.work(ctx, cl, t, w, deadline, seq)
		})
	}
	began := time.Now()
	deadline = began.Add(d)
	close(start)
	wg.Wait()
	seg := segment{elapsed: time.Since(began)}
	for _, r := range results {
		seg.latencies = append(seg.latencies, r.lat...)
		seg.errors += r.errors
		if seg.firstErr == "" {
			seg.firstErr = r.firstErr
		}
	}
	seg.requests = len(seg.latencies) + seg.errors
	return seg
}

// workerResult is what one worker of drive measured: the latencies of its
// good answers, its errors and the first of them.
type workerResult struct {
	lat      []time.Duration
	errors   int
	firstErr string
	buf      *bytes.Buffer // the answer being read
}

// work is worker w's closed loop until deadline: a request of t, its
// answer read in full and judged by t.good, then the next.
func (r *workerResult) work(ctx context.Context, cl *http.Client, t *target, w int, deadline time.Time, seq *atomic.Int64) {
	buf := r.buf
	for time.Now().Before(deadline) {
		req, err := t.request(ctx, w, seq.Add(1))
		if err != nil {
			r.errors++
			r.firstErr = err.Error()
			continue
		}
		began := time.Now()
		resp, err := cl.Do(req)
		if err != nil {
			r.errors++
			if r.firstErr == "" {
				r.firstErr = err.Error()
			}
			continue
		}
		buf.Reset()
		_, err = io.Copy(buf, resp.Body)
		resp.Body.Close()
		lat := time.Since(began)
		if err != nil || !t.good(resp.StatusCode, buf.Bytes()) {
			r.errors++
			if r.firstErr == "" {
				r.firstErr = fmt.Sprintf("HTTP %d: %s %v", resp.StatusCode, clip(buf.String()), err)
			}
			continue
		}
		r.lat = append(r.lat, lat)
	}
}

// Percentile returns the p-th percentile (0..100) of sorted latencies, by
// the nearest-rank method.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

// summarise sorts latencies and returns p50, p90, p99 and the mean.
func summarise(lat []time.Duration) (p50, p90, p99, mean time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	return Percentile(lat, 50), Percentile(lat, 90), Percentile(lat, 99), sum / time.Duration(len(lat))
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
