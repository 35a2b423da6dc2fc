package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machine describes where the figures were taken.
type machine struct {
	Date        string  `json:"date"`
	CPU         string  `json:"cpu"`
	Cores       int     `json:"cores"`
	MemoryGiB   float64 `json:"memory_gib"`
	OS          string  `json:"os"`
	Kernel      string  `json:"kernel"`
	Go          string  `json:"go"`
	Commit      string  `json:"commit"`
	LoadAtStart string  `json:"load_average_at_start"`
	LoadAtEnd   string  `json:"load_average_at_end"`
}

func describeMachine(ctx context.Context) machine {
	m := machine{Date: time.Now().UTC().Format("2006-01-02 15:04 MST"), Cores: runtime.NumCPU(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(), CPU: "unknown"}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		m.MemoryGiB = float64(int(kb/1024/1024*10+0.5)) / 10
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output(); err == nil {
		m.Go = strings.TrimSpace(string(out))
	}
	m.Commit = gitCommit(ctx)
	return m
}

// gitCommit is HEAD's short hash, with a note when the working tree
// differs from it (modified or untracked files).
func gitCommit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " + uncommitted changes"
	}
	return c
}

// procField is the value of the first "name : value" line of a /proc file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// readLoadAvg is the 1, 5 and 15 minute load averages.
func readLoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
