package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// goBench is one `go test -bench` invocation of the report.
type goBench struct {
	// Pkg and Pattern select the benchmarks.
	Pkg, Pattern string
	// Count and Benchtime are -count and -benchtime ("" for the default).
	Count     int
	Benchtime string
	// Mem adds -benchmem.
	Mem bool
	// Why says what the figures are for.
	Why string
	// Env is added to the go command's environment ("NAME=value").
	Env []string
	// Interleave runs the go command Count times with -count 1 instead of
	// once with -count Count, so that sub-benchmarks compared with each
	// other (fresh and history) take turns instead of running each Count
	// times in a row while the machine's load drifts.
	Interleave bool
}

// args is the go command line of b.
func (b goBench) args() []string {
	count := b.Count
	if b.Interleave {
		count = 1
	}
	a := []string{"test", "-run", "^$", "-bench", b.Pattern, "-count", strconv.Itoa(count)}
	if b.Benchtime != "" {
		a = append(a, "-benchtime", b.Benchtime)
	}
	if b.Mem {
		a = append(a, "-benchmem")
	}
	return append(a, b.Pkg)
}

// Command is b as a shell command.
func (b goBench) Command() string {
	c := "go " + strings.Join(quoteArgs(b.args()), " ")
	if b.Interleave {
		c = fmt.Sprintf("for i in $(seq %d); do %s; done", b.Count, c)
	}
	return c
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$|()*? ") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}

// benchResult is one benchmark's figures over its -count runs.
type benchResult struct {
	Name string `json:"name"`
	Runs int    `json:"runs"`
	// Median is the median of each unit's values ("ns/op", "allocs/op",
	// "calls/s", ...); Values all of them.
	Median map[string]float64   `json:"median"`
	Values map[string][]float64 `json:"values"`
}

// runGoBench runs b in dir and parses its output.
func runGoBench(ctx context.Context, dir string, b goBench) ([]*benchResult, string, error) {
	var out bytes.Buffer
	run := func(wd, name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = wd
		if len(b.Env) > 0 {
			cmd.Env = append(os.Environ(), b.Env...)
		}
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w\n%s", b.Command(), err, out.String())
		}
		return nil
	}
	if !b.Interleave {
		if err := run(dir, "go", b.args()...); err != nil {
			return nil, out.String(), err
		}
	} else if err := runInterleaved(dir, b, run); err != nil {
		return nil, out.String(), err
	}
	res := parseBench(out.String())
	if len(res) == 0 {
		return nil, out.String(), fmt.Errorf("%s: no benchmark ran\n%s", b.Command(), out.String())
	}
	return res, out.String(), nil
}

// runInterleaved builds b's test binary once and runs it b.Count times
// with -count 1, in the package's directory as go test would.
func runInterleaved(dir string, b goBench, run func(wd, name string, args ...string) error) error {
	tmp, err := os.MkdirTemp("", "toolgate-bench-test-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bench.test")
	if err := run(dir, "go", "test", "-c", "-o", bin, b.Pkg); err != nil {
		return err
	}
	args := []string{"-test.run", "^$", "-test.bench", b.Pattern, "-test.count", "1"}
	if b.Benchtime != "" {
		args = append(args, "-test.benchtime", b.Benchtime)
	}
	if b.Mem {
		args = append(args, "-test.benchmem")
	}
	for range b.Count {
		if err := run(filepath.Join(dir, b.Pkg), bin, args...); err != nil {
			return err
		}
	}
	return nil
}

// procsSuffix is the -GOMAXPROCS suffix of a benchmark's name.
var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads `go test -bench` output: for each benchmark line, the
// name (without the -GOMAXPROCS suffix), the iterations, then value-unit
// pairs.
func parseBench(out string) []*benchResult {
	var order []string
	byName := map[string]*benchResult{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		r := byName[name]
		if r == nil {
			r = &benchResult{Name: name, Median: map[string]float64{}, Values: map[string][]float64{}}
			byName[name] = r
			order = append(order, name)
		}
		r.Runs++
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			r.Values[f[i+1]] = append(r.Values[f[i+1]], v)
		}
	}
	out2 := make([]*benchResult, 0, len(order))
	for _, name := range order {
		r := byName[name]
		for unit, vs := range r.Values {
			r.Median[unit] = median(vs)
		}
		out2 = append(out2, r)
	}
	return out2
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
