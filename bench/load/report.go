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
	// CPUPerCallUS is the CPU per successful call of the path's servers
	// (toolgate or the proxy, plus the PostgreSQL cluster on (e)), in
	// microseconds: the median over rounds of each round's CPU time over
	// its successful calls. 0 when not measured (the direct path).
	CPUPerCallUS float64 `json:"cpu_per_call_us,omitempty"`
	// ServerCPUPerCallUS and DBCPUPerCallUS split it: the toolgate (or
	// proxy) process's and the PostgreSQL cluster's, each a median.
	ServerCPUPerCallUS float64 `json:"server_cpu_per_call_us,omitempty"`
	DBCPUPerCallUS     float64 `json:"db_cpu_per_call_us,omitempty"`
	// RoundCPUus is each round's CPU per call (server and database).
	RoundCPUus []float64 `json:"round_cpu_us,omitempty"`

	roundServer, roundDB []float64
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
	// CPU per call against the proxy's in the same run: (c)/(b) and
	// (d)/(b); 0 when either was not measured.
	ReadCPUVsProxy  float64 `json:"read_cpu_vs_proxy,omitempty"`
	WriteCPUVsProxy float64 `json:"write_cpu_vs_proxy,omitempty"`
	// PostgresCPUVsSQLite is (e)/(d), CPU per call, toolgate and the
	// cluster against toolgate on SQLite; 0 without (e).
	PostgresCPUVsSQLite float64 `json:"postgres_cpu_vs_sqlite,omitempty"`
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
	if seg.cpu.ok && len(seg.latencies) > 0 {
		n := float64(len(seg.latencies))
		res.roundServer = append(res.roundServer, us(seg.cpu.server)/n)
		res.roundDB = append(res.roundDB, us(seg.cpu.db)/n)
		res.RoundCPUus = append(res.RoundCPUus, us(seg.cpu.server+seg.cpu.db)/n)
	}
}

// median is the median of xs (the mean of the middle two for an even
// count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratio is a/b, 0 when either is 0 (not measured).
func ratio(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
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
		res.CPUPerCallUS, res.ServerCPUPerCallUS, res.DBCPUPerCallUS = median(res.RoundCPUus), median(res.roundServer), median(res.roundDB)
	}
	r.lat = nil
	slices.SortFunc(r.Results, func(a, b *Result) int {
		if a.Concurrency != b.Concurrency {
			return a.Concurrency - b.Concurrency
		}
		return slices.Index(allPaths, a.Path) - slices.Index(allPaths, b.Path)
	})
	for _, c := range r.Concurrency {
		a, b, rd, wr := r.Get(Direct, c), r.Get(Proxy, c), r.Get(Read, c), r.Get(Write, c)
		if a == nil || b == nil || rd == nil || wr == nil {
			continue
		}
		var pgX float64
		if e := r.Get(PGWrite, c); e != nil {
			pgX = ratio(e.CPUPerCallUS, wr.CPUPerCallUS)
		}
		r.Ratios = append(r.Ratios, Ratios{Concurrency: c,
			ReadCPUVsProxy: ratio(rd.CPUPerCallUS, b.CPUPerCallUS), WriteCPUVsProxy: ratio(wr.CPUPerCallUS, b.CPUPerCallUS),
			PostgresCPUVsSQLite: pgX,
			ReadVsProxy:         rd.Throughput / b.Throughput, WriteVsProxy: wr.Throughput / b.Throughput,
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

// allPaths are the paths in the order of tables.
var allPaths = []Path{Direct, Proxy, Read, Write, PGWrite}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// Print writes the comparison as tables.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "load: %d rounds of %gs per path and concurrency (after %gs of warm-up per path); orders: %v\n",
		r.Rounds, r.SegmentS, r.WarmupS, r.Order)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\tcallers\tcalls/s\tper round\tp50 µs\tp90 µs\tp99 µs\terrors\tCPU/call µs\t")
	for _, res := range r.Results {
		rounds := ""
		for i, t := range res.RoundThroughput {
			if i > 0 {
				rounds += " "
			}
			rounds += fmt.Sprintf("%.0f", t)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%.0f\t%.0f\t%.0f\t%d\t%s\t\n", res.Label, res.Concurrency, res.Throughput, rounds,
			res.P50us, res.P90us, res.P99us, res.Errors, res.cpuText())
	}
	tw.Flush()
	for _, ra := range r.Ratios {
		fmt.Fprintf(w, "callers %d: (c)/(b) %.2fx, (d)/(b) %.2fx, (b)/(a) %.2fx; added p50 over direct: read %+.0f µs, write %+.0f µs, proxy %+.0f µs\n",
			ra.Concurrency, ra.ReadVsProxy, ra.WriteVsProxy, ra.ProxyVsDirect, ra.ReadAddedP50us, ra.WriteAddedP50us, ra.ProxyAddedP50us)
		fmt.Fprintf(w, "callers %d: CPU per call against the proxy's: read %.2fx, write %.2fx", ra.Concurrency, ra.ReadCPUVsProxy, ra.WriteCPUVsProxy)
		if ra.PostgresCPUVsSQLite != 0 {
			fmt.Fprintf(w, "; PostgreSQL write against SQLite write's: %.2fx", ra.PostgresCPUVsSQLite)
		}
		fmt.Fprintln(w)
	}
}

// cpuText is the CPU per call as a table cell: "-" when not measured,
// "toolgate + database" on (e).
func (res *Result) cpuText() string {
	switch {
	case res.CPUPerCallUS == 0:
		return "-"
	case res.DBCPUPerCallUS != 0:
		return fmt.Sprintf("%.0f (%.0f + %.0f)", res.CPUPerCallUS, res.ServerCPUPerCallUS, res.DBCPUPerCallUS)
	}
	return fmt.Sprintf("%.0f", res.CPUPerCallUS)
}
