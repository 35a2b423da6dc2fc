package load

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// Report is the figures of one load comparison.
type Report struct {
	Rounds      int     `json:"rounds"`
	SegmentS    float64 `json:"segment_seconds"`
	WarmupS     float64 `json:"warmup_seconds"`
	Concurrency []int   `json:"concurrency"`
	// Order is the paths' order in each round.
	Order [][]Path `json:"order"`
	// Results has one entry per path and concurrency, all rounds merged.
	Results []*Result `json:"results"`
	// Ratios compare the paths at each concurrency.
	Ratios []Ratios `json:"ratios"`

	lat map[key][]time.Duration
}

type key struct {
	path Path
	conc int
}

// Result is one path at one concurrency, over all rounds.
type Result struct {
	Path        Path   `json:"path"`
	Label       string `json:"label"`
	Concurrency int    `json:"concurrency"`
	Requests    int    `json:"requests"`
	Errors      int    `json:"errors"`
	// Seconds is the measured time, all rounds.
	Seconds float64 `json:"seconds"`
	// Throughput is successful requests per second, all rounds.
	Throughput float64 `json:"throughput"`
	// RoundThroughput is each round's.
	RoundThroughput []float64 `json:"round_throughput"`
	P50us           float64   `json:"p50_us"`
	P90us           float64   `json:"p90_us"`
	P99us           float64   `json:"p99_us"`
	MeanUS          float64   `json:"mean_us"`
	FirstError      string    `json:"first_error,omitempty"`
}

// Ratios compare toolgate with the baseline and the direct path at one
// concurrency.
type Ratios struct {
	Concurrency int `json:"concurrency"`
	// ReadVsProxy is (c)/(b) throughput; WriteVsProxy (d)/(b);
	// ProxyVsDirect (b)/(a).
	ReadVsProxy   float64 `json:"read_vs_proxy"`
	WriteVsProxy  float64 `json:"write_vs_proxy"`
	ProxyVsDirect float64 `json:"proxy_vs_direct"`
	// Added latency over the direct path, p50 and p99, in microseconds.
	ReadAddedP50us  float64 `json:"read_added_p50_us"`
	WriteAddedP50us float64 `json:"write_added_p50_us"`
	ProxyAddedP50us float64 `json:"proxy_added_p50_us"`
	ReadAddedP99us  float64 `json:"read_added_p99_us"`
	WriteAddedP99us float64 `json:"write_added_p99_us"`
}

func newReport(o *Options) *Report {
	return &Report{Rounds: o.Rounds, SegmentS: o.Duration.Seconds(), WarmupS: o.Warmup.Seconds(),
		Concurrency: o.Concurrency, lat: map[key][]time.Duration{}}
}

func (r *Report) add(p Path, conc, round int, seg segment) {
	res := r.Get(p, conc)
	if res == nil {
		res = &Result{Path: p, Label: p.Label(), Concurrency: conc}
		r.Results = append(r.Results, res)
	}
	res.Requests += seg.requests
	res.Errors += seg.errors
	res.Seconds += seg.elapsed.Seconds()
	res.RoundThroughput = append(res.RoundThroughput, float64(len(seg.latencies))/seg.elapsed.Seconds())
	if res.FirstError == "" {
		res.FirstError = seg.firstErr
	}
	k := key{p, conc}
	r.lat[k] = append(r.lat[k], seg.latencies...)
}

// Get returns the result of path p at concurrency conc, or nil.
func (r *Report) Get(p Path, conc int) *Result {
	for _, res := range r.Results {
		if res.Path == p && res.Concurrency == conc {
			return res
		}
	}
	return nil
}

func (r *Report) finish() {
	for _, res := range r.Results {
		lat := r.lat[key{res.Path, res.Concurrency}]
		res.Throughput = float64(len(lat)) / res.Seconds
		p50, p90, p99, mean := summarise(lat)
		res.P50us, res.P90us, res.P99us, res.MeanUS = us(p50), us(p90), us(p99), us(mean)
	}
	r.lat = nil
	slices.SortFunc(r.Results, func(a, b *Result) int {
		if a.Concurrency != b.Concurrency {
			return a.Concurrency - b.Concurrency
		}
		return slices.Index([]Path{Direct, Proxy, Read, Write}, a.Path) - slices.Index([]Path{Direct, Proxy, Read, Write}, b.Path)
	})
	for _, c := range r.Concurrency {
		a, b, rd, wr := r.Get(Direct, c), r.Get(Proxy, c), r.Get(Read, c), r.Get(Write, c)
		if a == nil || b == nil || rd == nil || wr == nil {
			continue
		}
		r.Ratios = append(r.Ratios, Ratios{Concurrency: c,
			ReadVsProxy: rd.Throughput / b.Throughput, WriteVsProxy: wr.Throughput / b.Throughput,
			ProxyVsDirect:  b.Throughput / a.Throughput,
			ReadAddedP50us: rd.P50us - a.P50us, WriteAddedP50us: wr.P50us - a.P50us, ProxyAddedP50us: b.P50us - a.P50us,
			ReadAddedP99us: rd.P99us - a.P99us, WriteAddedP99us: wr.P99us - a.P99us,
		})
	}
}

// RatiosAt returns the ratios at concurrency conc, or nil.
func (r *Report) RatiosAt(conc int) *Ratios {
	for i := range r.Ratios {
		if r.Ratios[i].Concurrency == conc {
			return &r.Ratios[i]
		}
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Print writes the comparison as tables.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "load: %d rounds of %gs per path and concurrency (after %gs of warm-up per path); orders: %v\n",
		r.Rounds, r.SegmentS, r.WarmupS, r.Order)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\tcallers\tcalls/s\tper round\tp50 µs\tp90 µs\tp99 µs\terrors\t")
	for _, res := range r.Results {
		rounds := ""
		for i, t := range res.RoundThroughput {
			if i > 0 {
				rounds += " "
			}
			rounds += fmt.Sprintf("%.0f", t)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%.0f\t%.0f\t%.0f\t%d\t\n", res.Label, res.Concurrency, res.Throughput, rounds,
			res.P50us, res.P90us, res.P99us, res.Errors)
	}
	tw.Flush()
	for _, ra := range r.Ratios {
		fmt.Fprintf(w, "callers %d: (c)/(b) %.2fx, (d)/(b) %.2fx, (b)/(a) %.2fx; added p50 over direct: read %+.0f µs, write %+.0f µs, proxy %+.0f µs\n",
			ra.Concurrency, ra.ReadVsProxy, ra.WriteVsProxy, ra.ProxyVsDirect, ra.ReadAddedP50us, ra.WriteAddedP50us, ra.ProxyAddedP50us)
	}
}
