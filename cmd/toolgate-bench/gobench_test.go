package main

import (
	"strings"
	"testing"
)

const sampleBench = `goos: linux
goarch: amd64
pkg: github.com/toolgate/toolgate/pipeline
cpu: AMD EPYC
BenchmarkCall/read-2         	   78411	     14650 ns/op	    5900 B/op	      72 allocs/op
BenchmarkCall/read-2         	   60134	     19216 ns/op	    5899 B/op	      72 allocs/op
BenchmarkCall/read-2         	   60134	     17000 ns/op	    5899 B/op	      72 allocs/op
BenchmarkRecordedCalls/sqlite/64-2      	    2925	    544290 ns/op	      1837 calls/s
BenchmarkCommit/committers=64-2        	    7702	    151312 ns/op	      6609 commits/s	        34.54 commits/txn
--- SKIP: BenchmarkRecordedCalls/postgres
PASS
ok  	github.com/toolgate/toolgate/pipeline	4.485s
`

func TestParseBench(t *testing.T) {
	rs := parseBench(sampleBench)
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3: %+v", len(rs), rs)
	}
	read := rs[0]
	if read.Name != "BenchmarkCall/read" || read.Runs != 3 || read.Median["ns/op"] != 17000 || read.Median["allocs/op"] != 72 {
		t.Errorf("read: %+v", read)
	}
	if rs[1].Name != "BenchmarkRecordedCalls/sqlite/64" || rs[1].Median["calls/s"] != 1837 {
		t.Errorf("recorded: %+v", rs[1])
	}
	if rs[2].Name != "BenchmarkCommit/committers=64" || rs[2].Median["commits/txn"] != 34.54 {
		t.Errorf("commit: %+v", rs[2])
	}
}

func TestTargets(t *testing.T) {
	d := &reportData{GoBench: []*goBenchRun{{Results: parseBench(sampleBench)}}}
	for _, tg := range evaluate(d) {
		switch {
		case strings.HasPrefix(tg.Name, "in-process pipeline, read: allocations"):
			if tg.Pass || tg.Measured != "72" || !strings.Contains(tg.Gap, "over by 80%") {
				t.Errorf("allocations: %+v", tg)
			}
		case strings.HasPrefix(tg.Name, "recorded write calls"):
			if tg.Pass || !strings.Contains(tg.Gap, "missed by 93%") {
				t.Errorf("recorded: %+v", tg)
			}
		case strings.HasPrefix(tg.Name, "soak: duplicate"):
			if tg.Pass || tg.Measured != "not measured" {
				t.Errorf("unmeasured soak: %+v", tg)
			}
		}
	}
}

func TestGroup(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -25000: "-25,000"} {
		if got := group(v, 0); got != want {
			t.Errorf("group(%v) = %q, want %q", v, got, want)
		}
	}
	if got := group(1234.567, 2); got != "1,234.57" {
		t.Errorf("group(1234.567, 2) = %q", got)
	}
}
