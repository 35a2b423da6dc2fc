package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/bench/faultcheck"
	"github.com/toolgate/toolgate/internal/faultproxy"
	"github.com/toolgate/toolgate/types"
)

// TestDependencyFaults runs the real binary on SQLite under a steady load
// of distinct writes (over HTTP, with a key the provider honours or with a
// verify read, and over MCP), repeats and reads from 8 callers, with the
// payment provider (its HTTP API and its MCP server) behind a fault proxy
// that, one after another, trickles its
// answers, truncates them, resets connections mid-answer, blackholes them
// (accepts, never answers), drops only the answers (the refund is made),
// adds latency past the read timeout, and refuses connections. Each fault
// stays on 1.5 s. Then `toolgate reconcile` runs beside the server and the
// whole history is checked (faultcheck.Check): no refund twice, every
// refund in the ledger, every answer with an effect has its row, nothing
// left unknown that the provider made, each run's state and replay match
// the refunds, every answer within its tool's total timeout + 2 s, and a
// new write succeeding within 5 s of each fault's end.
func TestDependencyFaults(t *testing.T) {
	var faults []*faultcheck.Fault
	res, err := faultcheck.Run(context.Background(), faultcheck.Options{
		Binary: binary, Dir: t.TempDir(), MCP: true,
		Schedule: func(p *faultproxy.Proxy) func(int) *faultcheck.Fault {
			for _, name := range []string{faultcheck.FaultTrickle, faultcheck.FaultTruncate, faultcheck.FaultReset,
				faultcheck.FaultBlackhole, faultcheck.FaultDropAnswers, faultcheck.FaultLatency, faultcheck.FaultRefuse} {
				f, err := faultcheck.ProviderFault(p, name, 300*time.Millisecond, 1500*time.Millisecond)
				if err != nil {
					t.Fatal(err)
				}
				faults = append(faults, f)
			}
			return faultcheck.FixedSchedule(faults...)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d faults, %d calls (%d answered) %v; effects %d, ledger %d, duplicates %d, lost %d, missing rows %d, unsettled %d, unknown unmade %d, reconciled %d, worst recovery %s, worst over budget %s",
		len(res.Faults), res.Calls, res.Answered, res.Codes, res.Effects, res.LedgerOps, res.Duplicates, res.Lost, res.MissingRows,
		res.Unsettled, res.UnknownUnmade, res.Reconciled, res.WorstRecovery.Round(time.Millisecond), res.WorstOver.Round(time.Millisecond))
	for _, v := range res.Violations {
		t.Error(v)
	}
	for _, tool := range []string{faultcheck.ToolVerified, faultcheck.ToolKeyed, faultcheck.ToolMCP} {
		codes := res.Tools[tool]
		t.Logf("%s: %v", tool, codes)
		if codes[types.CodeOK] == 0 || codes[types.CodeOK] == sum(codes) {
			t.Errorf("%s answered %v: want successes, and failures during the faults", tool, codes)
		}
	}
	if len(res.Faults) != len(faults) {
		t.Fatalf("%d faults applied, want %d", len(res.Faults), len(faults))
	}
}

func sum(m map[types.Code]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
