package load

import (
	"os"
	"os/exec"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       procTimes
		wantErr    bool
	}{
		{name: "plain", line: "4242 (toolgate) S 17 4242 17 0 -1 4194560 900 0 0 0 250 40 7 3 20 0 9 0 100 0 0",
			want: procTimes{ppid: 17, cpu: 290 * clockTick, children: 10 * clockTick}},
		{name: "name with spaces and a parenthesis", line: "9 (postgres: x) y) R 1 9 9 0 -1 0 0 0 0 0 5 6 0 1 20 0 1 0 1 0 0",
			want: procTimes{ppid: 1, cpu: 11 * clockTick, children: 1 * clockTick}},
		{name: "no parenthesis", line: "9 postgres R 1", wantErr: true},
		{name: "short", line: "9 (x) R 1 2 3", wantErr: true},
		{name: "not a number", line: "9 (x) S 1 9 9 0 -1 0 0 0 0 0 five 6 0 1 20 0 1 0 1 0 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.line))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Errorf("%+v, want %+v", got, tt.want)
			}
		})
	}
}

// TreeCPU counts a child's CPU while it runs and, once reaped, through
// the parent's cutime + cstime: the real /proc of a real child process.
func TestTreeCPUCountsChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	// While it runs it is a live child of this process. This process's own
	// CPU is read before TreeCPU, which counts it again later (larger).
	seen := false
	for !seen {
		child, err := readProc(cmd.Process.Pid)
		if err != nil || child.ppid != self {
			break // it ended first: the reaped case below still holds
		}
		own, err := ProcessCPU(self)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := TreeCPU(self)
		if err != nil {
			t.Fatal(err)
		}
		if seen = child.cpu > 0; seen && tree-own < child.cpu {
			t.Fatalf("a live child with %v of CPU, but TreeCPU - ProcessCPU = %v", child.cpu, tree-own)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	own, err := ProcessCPU(self)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := TreeCPU(self)
	if err != nil {
		t.Fatal(err)
	}
	// Ticks round down: allow two of them.
	if tree-own < used-2*clockTick || used < 5*clockTick {
		t.Errorf("child used %v; TreeCPU - ProcessCPU = %v", used, tree-own)
	}
}

func TestMedianAndRatio(t *testing.T) {
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("odd: %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("even: %v", m)
	}
	if m := median(nil); m != 0 {
		t.Errorf("none: %v", m)
	}
	if r := ratio(3, 0); r != 0 {
		t.Errorf("unmeasured floor: %v", r)
	}
}
