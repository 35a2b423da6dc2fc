package mcpcall_test

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/types"
)

// TestStdioRestartSurvived: the subprocess dies in the middle of a call;
// that call's outcome is unknown (it is a write), and the next call runs
// on a new process.
func TestStdioRestartSurvived(t *testing.T) {
	b := setup(t, transports[1])
	before := b.counts(t).PID
	res := b.call(t, "crash", `{}`)
	if res.OK || res.Meta.SideEffect != types.SideEffectUnknown {
		t.Fatalf("crash: ok=%v side_effect=%s (%s)", res.OK, res.Meta.SideEffect, res.Observation)
	}
	after := b.counts(t).PID
	if after == before || after == 0 {
		t.Fatalf("pid before %d, after %d: want a new process", before, after)
	}
	first := b.call(t, "pay", `{"order_id": "ORD-9", "amount": 7}`)
	if !first.OK {
		t.Fatalf("pay on the restarted server: %s", first.Observation)
	}
}

// TestToolListChanged: notifications/tools/list_changed brings a new tool
// in, and a tool that disappears answers unknown_tool.
func TestToolListChanged(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			refreshed := make(chan error, 8)
			b := setupWith(t, tr, func(o *toolgate.Options) {
				o.ToolsRefreshed = func(_ string, err error) { refreshed <- err }
			})
			if res := b.call(t, "extra", `{}`); res.Code() != types.CodeUnknownTool {
				t.Fatalf("extra before it exists: %s", res.Code())
			}
			if res := b.call(t, "toggle_extra", `{}`); !res.OK {
				t.Fatalf("toggle_extra: %s", res.Observation)
			}
			waitRefreshed(t, refreshed)
			if res := b.call(t, "extra", `{}`); !res.OK || string(res.Data) != `{"extra":true}` {
				t.Fatalf("extra once listed: %s %s", res.Code(), res.Observation)
			}
			if b.gw.Config().Tools["extra"].Effect != types.EffectRead {
				t.Errorf("extra's effect: %s", b.gw.Config().Tools["extra"].Effect)
			}
			if res := b.call(t, "toggle_extra", `{}`); !res.OK {
				t.Fatalf("toggle_extra: %s", res.Observation)
			}
			waitRefreshed(t, refreshed)
			if res := b.call(t, "extra", `{}`); res.Code() != types.CodeUnknownTool {
				t.Errorf("extra after it was removed: %s (%s)", res.Code(), res.Observation)
			}
		})
	}
}

// waitRefreshed waits for one refresh to be merged; the bound only keeps a
// broken test from hanging.
func waitRefreshed(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no refresh after notifications/tools/list_changed")
	}
}
