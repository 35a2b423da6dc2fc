package load

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/bench/serveproc"
)

// proxyEnv makes this test binary the baseline proxy process: argv ends
// in "--target URL" (Options.ProxyCommand).
const proxyEnv = "TOOLGATE_LOAD_TEST_PROXY"

func TestMain(m *testing.M) {
	if os.Getenv(proxyEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err := ServeProxy(ctx, os.Stderr, "127.0.0.1:0", os.Args[len(os.Args)-1])
		stop()
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A short load comparison through the real `toolgate serve` binary and a
// proxy process reports CPU per call for every path that has a server
// process of its own, and none for the direct path; with
// TOOLGATE_TEST_POSTGRES (a cluster on this machine, as
// scripts/with-postgres.sh starts) path (e) counts the cluster's CPU too.
// It asserts that figures exist, never their size.
func TestRunMeasuresCPUPerCall(t *testing.T) {
	bin, err := serveproc.Build(t.Context(), t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(proxyEnv, "1")
	o := Options{Binary: bin, Dir: t.TempDir(), Concurrency: []int{2}, Rounds: 2, Duration: 500 * time.Millisecond,
		Warmup: 100 * time.Millisecond, ProxyCommand: []string{os.Args[0]}, Postgres: os.Getenv("TOOLGATE_TEST_POSTGRES")}
	rep, err := Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	rep.Print(os.Stdout)
	measured := []Path{Proxy, Read, Write}
	if o.Postgres != "" {
		measured = append(measured, PGWrite)
	}
	for _, p := range measured {
		r := rep.Get(p, 2)
		if r == nil {
			t.Fatalf("no result for %s", p.Label())
		}
		if r.CPUPerCallUS <= 0 || r.ServerCPUPerCallUS <= 0 || len(r.RoundCPUus) != o.Rounds {
			t.Errorf("%s: CPU per call %v (server %v), rounds %v: want a figure per round", p.Label(), r.CPUPerCallUS, r.ServerCPUPerCallUS, r.RoundCPUus)
		}
	}
	if d := rep.Get(Direct, 2); d == nil || d.CPUPerCallUS != 0 {
		t.Errorf("direct path: %+v, want no CPU figure (no server process of its own)", d)
	}
	if ra := rep.RatiosAt(2); ra == nil || ra.ReadCPUVsProxy <= 0 || ra.WriteCPUVsProxy <= 0 {
		t.Errorf("ratios %+v: want CPU per call against the proxy's", ra)
	}
	if o.Postgres != "" {
		if e := rep.Get(PGWrite, 2); e.DBCPUPerCallUS <= 0 {
			t.Errorf("(e): the cluster's CPU per call %v, want a figure", e.DBCPUPerCallUS)
		}
		if ra := rep.RatiosAt(2); ra.PostgresCPUVsSQLite <= 0 {
			t.Errorf("(e)/(d) CPU ratio %v, want a figure", ra.PostgresCPUVsSQLite)
		}
	}
}
