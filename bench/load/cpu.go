package load

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// procTimes are the CPU figures of one /proc/PID/stat line.
type procTimes struct {
	ppid int
	// cpu is utime + stime: the process's own CPU, all its threads.
	cpu time.Duration
	// children is cutime + cstime: the CPU of its children it has reaped.
	children time.Duration
}

// parseStat parses a /proc/PID/stat line. The command name (field 2) is
// in parentheses and may hold spaces, so the fields are counted from the
// last ')'.
func parseStat(line []byte) (procTimes, error) {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return procTimes{}, fmt.Errorf("load: /proc stat line without ')': %q", clip(string(line)))
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	f := bytes.Fields(line[i+1:])
	if len(f) < 15 {
		return procTimes{}, fmt.Errorf("load: /proc stat line with %d fields after the name", len(f))
	}
	var n [5]int64
	for j, idx := range []int{1, 11, 12, 13, 14} { // ppid, utime, stime, cutime, cstime
		v, err := strconv.ParseInt(string(f[idx]), 10, 64)
		if err != nil {
			return procTimes{}, fmt.Errorf("load: /proc stat field %d: %w", idx+3, err)
		}
		n[j] = v
	}
	return procTimes{ppid: int(n[0]), cpu: time.Duration(n[1]+n[2]) * clockTick,
		children: time.Duration(n[3]+n[4]) * clockTick}, nil
}

// readProc reads /proc/PID/stat.
func readProc(pid int) (procTimes, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procTimes{}, err
	}
	return parseStat(b)
}

// ProcessCPU is the CPU time (utime + stime, all threads) process pid has
// used so far.
func ProcessCPU(pid int) (time.Duration, error) {
	t, err := readProc(pid)
	return t.cpu, err
}

// TreeCPU is the CPU time a server of processes has used so far: the
// parent pid's own, its reaped children's (cutime + cstime), and that of
// each live process whose parent is pid. For a PostgreSQL cluster, pid is
// the postmaster: the sum counts its backends, WAL writer, checkpointer
// and the rest, including those that ended since the last reading.
func TreeCPU(pid int) (time.Duration, error) {
	root, err := readProc(pid)
	if err != nil {
		return 0, err
	}
	total := root.cpu + root.children
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		t, err := readProc(child)
		if err != nil || t.ppid != pid {
			continue // gone since the listing, or not a child
		}
		total += t.cpu
	}
	return total, nil
}

// cpuMeter reads one server's CPU time so far; nil for a path with no
// process of its own to measure (the direct path).
type cpuMeter func() (time.Duration, error)

// cpuSample is one segment's CPU: the server's (toolgate or the proxy)
// and, on the PostgreSQL path, the database cluster's.
type cpuSample struct {
	server, db time.Duration
	ok         bool
}

// meters are a path's CPU meters.
type meters struct {
	server, db cpuMeter
}

// read reads both meters; a meter that fails makes the sample not ok.
func (m meters) read() cpuSample {
	if m.server == nil {
		return cpuSample{}
	}
	s := cpuSample{ok: true}
	var err error
	if s.server, err = m.server(); err != nil {
		s.ok = false
	}
	if m.db != nil {
		if s.db, err = m.db(); err != nil {
			s.ok = false
		}
	}
	return s
}

// since is the CPU used from before to s.
func (s cpuSample) since(before cpuSample) cpuSample {
	return cpuSample{server: s.server - before.server, db: s.db - before.db, ok: s.ok && before.ok}
}
