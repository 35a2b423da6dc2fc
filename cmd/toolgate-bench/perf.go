package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/bench/load"
)

// profiler records CPU profiles of the toolgate server with Linux perf
// while the load comparison drives (c), (d) and (e) at its highest
// concurrency, in the first round.
type profiler struct {
	dir   string
	conc  int
	files []string
	warn  []string
}

func newProfiler(dir string, conc []int) (*profiler, error) {
	if _, err := exec.LookPath("perf"); err != nil {
		return nil, fmt.Errorf("--perf needs Linux perf on PATH: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &profiler{dir: dir, conc: slices.Max(conc)}, nil
}

// around is load.Options.Around.
func (p *profiler) around(pid int, path load.Path, conc, round int) func() {
	if round != 0 || conc != p.conc || (path != load.Read && path != load.Write && path != load.PGWrite) {
		return nil
	}
	file := filepath.Join(p.dir, fmt.Sprintf("perf-%s-c%d.data", path, conc))
	var stderr bytes.Buffer
	cmd := exec.Command("perf", "record", "-F", "999", "-g", "-p", strconv.Itoa(pid), "-o", file)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		p.warn = append(p.warn, fmt.Sprintf("perf record for %s: %v", path, err))
		return nil
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "interrupt") {
			p.warn = append(p.warn, fmt.Sprintf("perf record for %s: %v: %s", path, err, stderr.String()))
			return
		}
		p.files = append(p.files, file)
	}
}

// interesting picks the frames of the inclusive ("children") profile
// worth printing: toolgate's own, the SQLite engine's commit and fsync, the
// garbage collector, JSON, HTTP serving and syscalls.
var interesting = regexp.MustCompile(`toolgate/toolgate/|_vdbeCommit|_walFrames|Xfsync|sqlite\.\(\*conn\)\.step|gcBgMarkWorker$|runtime\.mallocgc$|encoding/json\.\(\*Decoder\)\.Decode|encoding/json\.\(\*encodeState\)\.marshal|net/http\.\(\*conn\)\.serve$|net/http\.\(\*persistConn\)|runtime\.sysmon|Syscall6$`)

// report writes each profile's inclusive times (a function and what it
// calls) beside its data file, and prints the interesting frames.
func (p *profiler) report(w io.Writer) error {
	for _, warn := range p.warn {
		fmt.Fprintln(w, "warning:", warn)
	}
	for _, file := range p.files {
		sum, out, err := summarise(file)
		if err != nil {
			return err
		}
		txt := strings.TrimSuffix(file, ".data") + ".txt"
		if err := os.WriteFile(txt, out, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nCPU profile of toolgate serve, %s: inclusive %% of samples (a function with all it calls), selected frames\n(all frames: %s; call graphs: perf report -i %s):\n",
			filepath.Base(file), txt, file)
		for _, f := range sum.Inclusive {
			fmt.Fprintf(w, "  %6.2f%%  %s\n", f.Percent, f.Symbol)
		}
	}
	return nil
}

// profileSummary is the top of one CPU profile of toolgate serve.
type profileSummary struct {
	// Name is the profile's data file, without its directory.
	Name string `json:"name"`
	// Inclusive are the interesting frames by inclusive share of the
	// samples (a function with all it calls), at most 45.
	Inclusive []profileFrame `json:"inclusive"`
	// Self are the frames with the largest own share, at most 15.
	Self []profileFrame `json:"self"`
	// Samples is perf's count of samples in the profile, as it says it.
	Samples string `json:"samples"`
}

// profileFrame is one function's share of a profile's samples.
type profileFrame struct {
	Percent float64 `json:"percent"`
	Symbol  string  `json:"symbol"`
}

// summarise reads a perf data file: its summary and the whole text report.
func summarise(file string) (*profileSummary, []byte, error) {
	out, err := exec.Command("perf", "report", "-i", file, "--stdio", "--children", "--sort", "symbol",
		"-g", "none", "--percent-limit", "0.5").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("perf report %s: %w", file, err)
	}
	sum := &profileSummary{Name: filepath.Base(file)}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if rest, ok := strings.CutPrefix(line, "# Samples: "); ok && sum.Samples == "" {
			sum.Samples = strings.TrimSpace(rest)
		}
		if strings.HasPrefix(line, "#") || len(f) < 4 {
			continue
		}
		children, err1 := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
		self, err2 := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		if err1 != nil || err2 != nil {
			continue
		}
		sym := f[3]
		if interesting.MatchString(f[3]) && len(sum.Inclusive) < 45 {
			sum.Inclusive = append(sum.Inclusive, profileFrame{children, sym})
		}
		if self >= 0.5 {
			sum.Self = append(sum.Self, profileFrame{self, sym})
		}
	}
	slices.SortStableFunc(sum.Self, func(a, b profileFrame) int { return cmpFloatDesc(a.Percent, b.Percent) })
	if len(sum.Self) > 15 {
		sum.Self = sum.Self[:15]
	}
	return sum, out, nil
}

func cmpFloatDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// summaries are the summaries of every profile recorded.
func (p *profiler) summaries() ([]*profileSummary, error) {
	var out []*profileSummary
	for _, file := range p.files {
		sum, _, err := summarise(file)
		if err != nil {
			return nil, err
		}
		out = append(out, sum)
	}
	return out, nil
}
