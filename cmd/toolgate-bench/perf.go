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
// while the load comparison drives (c) and (d) at its highest
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
	if round != 0 || conc != p.conc || (path != load.Read && path != load.Write) {
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
		out, err := exec.Command("perf", "report", "-i", file, "--stdio", "--children", "--sort", "symbol",
			"-g", "none", "--percent-limit", "0.5").Output()
		if err != nil {
			return fmt.Errorf("perf report %s: %w", file, err)
		}
		txt := strings.TrimSuffix(file, ".data") + ".txt"
		if err := os.WriteFile(txt, out, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nCPU profile of toolgate serve, %s: inclusive %% of samples (a function with all it calls), selected frames\n(all frames: %s; call graphs: perf report -i %s):\n",
			filepath.Base(file), txt, file)
		n := 0
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if strings.HasPrefix(line, "#") || len(f) < 4 || !interesting.MatchString(f[3]) {
				continue
			}
			fmt.Fprintf(w, "  %7s  %s\n", f[0], f[3])
			if n++; n == 45 {
				break
			}
		}
	}
	return nil
}
