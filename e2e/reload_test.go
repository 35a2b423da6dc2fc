package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

// reloadYAML has a read the provider never answers (its read timeout is
// READ) and the held write of holdYAML; PROVIDER is the provider's URL.
const reloadYAML = holdYAML + `  hang_read:
    description: A read the provider never answers.
    dependency: payments
    request: {method: GET, path: /hang}
    effect: read
    timeout: {connect: 1s, read: READ}
    retry: {max_attempts: 1}
`

// configInfo is the answer of GET /v1/config.
type configInfo struct {
	Version         string    `json:"version"`
	Path            string    `json:"path"`
	LoadedAt        time.Time `json:"loaded_at"`
	Tools           int       `json:"tools"`
	RestartRequired []string  `json:"restart_required"`
	LastReload      *struct {
		OK       bool     `json:"ok"`
		Version  string   `json:"version"`
		Previous string   `json:"previous"`
		Problems []string `json:"problems"`
	} `json:"last_reload"`
}

func (p *proc) configInfo() configInfo {
	p.t.Helper()
	a := p.get("/v1/config", supportKey)
	if a.status != http.StatusOK {
		p.t.Fatalf("GET /v1/config: %d %s", a.status, a.body)
	}
	var info configInfo
	if err := json.Unmarshal(a.body, &info); err != nil {
		p.t.Fatalf("GET /v1/config: %v\n%s", err, a.body)
	}
	return info
}

// reload writes config over the server's file, sends SIGHUP and waits for
// the n-th log line holding want.
func (p *proc) reload(config, want string, n int) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, "toolgate.yaml"), []byte(config), 0o600); err != nil {
		p.t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		p.t.Fatal(err)
	}
	p.waitCount(want, n)
}

// waitCount waits until n lines of stderr hold s.
func (p *proc) waitCount(s string, n int) {
	p.t.Helper()
	timeout := time.After(time.Minute)
	for {
		p.out.mu.Lock()
		seen := 0
		for _, line := range p.out.all {
			if strings.Contains(line, s) {
				seen++
			}
		}
		more := p.out.changed
		p.out.mu.Unlock()
		if seen >= n {
			return
		}
		select {
		case <-more:
		case <-p.done:
			p.t.Fatalf("toolgate exited (%v) before saying %q %d times:\n%s", p.err, s, n, p.out)
		case <-timeout:
			p.t.Fatalf("toolgate did not say %q %d times within a minute:\n%s", s, n, p.out)
		}
	}
}

// callHang calls hang_read and returns its failure's message.
func callHang(t *testing.T, srv *proc, run string) string {
	t.Helper()
	var res types.Result
	srv.post("/v1/runs/"+run+"/calls", supportKey, `{"tool":"hang_read","args":{}}`).decode(t, &res)
	if res.OK || res.Error == nil || res.Error.Code != types.CodeTimeout {
		t.Fatalf("hang_read: %+v", res)
	}
	return res.Error.Message
}

// SIGHUP with a changed read timeout: calls after it use the new timeout,
// without a restart; /v1/config and /healthz name the new version; a key
// that needs a restart is reported as not applied.
func TestSIGHUPAppliesANewReadTimeout(t *testing.T) {
	prov := startProvider(t)
	yaml := strings.ReplaceAll(reloadYAML, "PROVIDER", prov.URL())
	srv := startServe(t, strings.ReplaceAll(yaml, "READ", "200ms"))
	srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`)
	if msg := callHang(t, srv, "r1"); !strings.Contains(msg, "within 200ms") {
		t.Fatalf("before the reload: %s", msg)
	}
	before := srv.configInfo()
	if before.Version == "" || before.Tools != 2 || !strings.HasSuffix(before.Path, "toolgate.yaml") || before.LastReload != nil {
		t.Fatalf("config before the reload: %+v", before)
	}

	srv.reload("listen: 127.0.0.1:1\n"+strings.ReplaceAll(yaml, "READ", "450ms"), "config reloaded", 1)
	if msg := callHang(t, srv, "r1"); !strings.Contains(msg, "within 450ms") {
		t.Errorf("after the reload: %s, want the new 450ms read timeout", msg)
	}
	after := srv.configInfo()
	if after.Version == before.Version || !after.LoadedAt.After(before.LoadedAt) || after.LastReload == nil ||
		!after.LastReload.OK || after.LastReload.Previous != before.Version {
		t.Errorf("config after the reload: %+v (before %+v)", after, before)
	}
	if fmt.Sprint(after.RestartRequired) != "[listen]" {
		t.Errorf("restart_required %v, want [listen]", after.RestartRequired)
	}
	srv.waitLine("key=listen")
	var health struct {
		OK            bool   `json:"ok"`
		ConfigVersion string `json:"config_version"`
	}
	srv.get("/healthz", "").decode(t, &health)
	if !health.OK || health.ConfigVersion != after.Version {
		t.Errorf("healthz %+v, want config_version %s", health, after.Version)
	}
	// The stats compare with the new timeout too.
	var stats struct {
		Tools map[string]struct {
			TimeoutMS int64 `json:"timeout_ms"`
		} `json:"tools"`
	}
	srv.get("/v1/stats?window=1h", supportKey).decode(t, &stats)
	if got := stats.Tools["hang_read"].TimeoutMS; got != 450 {
		t.Errorf("stats timeout_ms %d, want 450", got)
	}
}

// SIGHUP with an invalid file: refused, every problem logged, the old
// config stays live and serves.
func TestSIGHUPRefusesAnInvalidConfig(t *testing.T) {
	prov := startProvider(t)
	yaml := strings.ReplaceAll(reloadYAML, "PROVIDER", prov.URL())
	srv := startServe(t, strings.ReplaceAll(yaml, "READ", "200ms"))
	srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":{"id":"cust_42"}}`)
	before := srv.configInfo()

	// Two problems in a file that parses: both are logged, one line each.
	bad := strings.ReplaceAll(strings.ReplaceAll(yaml, "READ", "450ms"), "effect: read", "effect: maybe")
	bad = strings.ReplaceAll(bad, `base_url: "`+prov.URL()+`"`, `base_url: "ftp://nowhere"`)
	srv.reload(bad, "reload refused: the new config has problems", 1)
	srv.waitCount("reload refused: config problem", 2)
	for _, want := range []string{"tools.hang_read.effect", "dependencies.payments.base_url"} {
		if line, more := srv.out.find(want); more != nil {
			t.Errorf("no log line names %s:\n%s", want, srv.out)
		} else if !strings.Contains(line, "config problem") {
			t.Errorf("problem logged as %q", line)
		}
	}
	// A file that is not YAML at all.
	srv.reload("tools: [\n", "reload refused: the new config has problems", 2)

	after := srv.configInfo()
	if after.Version != before.Version || !after.LoadedAt.Equal(before.LoadedAt) {
		t.Errorf("the refused file went live: %+v (before %+v)", after, before)
	}
	if after.LastReload == nil || after.LastReload.OK || len(after.LastReload.Problems) == 0 || after.LastReload.Version != before.Version {
		t.Errorf("last_reload %+v, want refused with its problems", after.LastReload)
	}
	if msg := callHang(t, srv, "r1"); !strings.Contains(msg, "within 200ms") {
		t.Errorf("after a refused reload: %s, want the old 200ms read timeout", msg)
	}
}

// A write in flight during a reload that removes its tool completes, and
// records its state update; a call admitted after the reload does not find
// the tool.
func TestSIGHUPLetsACallInFlightComplete(t *testing.T) {
	prov, arrived, release := heldProvider(t)
	yaml := strings.ReplaceAll(strings.ReplaceAll(reloadYAML, "PROVIDER", prov.URL()), "READ", "200ms")
	srv := startServe(t, yaml)
	srv.post("/v1/runs", supportKey, `{"run_id":"r1","principal":{"id":"cust_42"},"state":{"refunded_paise":0}}`)
	outcomes := make(chan callOutcome, 1)
	go sendCall(srv.base, "r1", `{"tool":"hold_refund","args":{"order_id":"ORD-4471","amount_paise":1000}}`, outcomes)
	waitArrivals(t, arrived, 1)

	without := yaml[:strings.Index(yaml, "  hold_refund:")]
	srv.reload(without, "config reloaded", 1)
	var res types.Result
	srv.post("/v1/runs/r1/calls", supportKey, `{"tool":"hold_refund","args":{"order_id":"ORD-4471","amount_paise":2000}}`).decode(t, &res)
	if res.Error == nil || res.Error.Code != types.CodeUnknownTool {
		t.Errorf("a call admitted after the reload: %+v, want unknown_tool", res)
	}

	release()
	o := <-outcomes
	if o.err != nil || o.status != http.StatusOK || !o.res.OK {
		t.Fatalf("the call in flight: HTTP %d %v %+v", o.status, o.err, o.res)
	}
	var run struct {
		State json.RawMessage `json:"state"`
	}
	srv.get("/v1/runs/r1", supportKey).decode(t, &run)
	if string(run.State) != `{"refunded_paise":1000}` {
		t.Errorf("state %s, want the call in flight's update", run.State)
	}
	if n := prov.Counts().Refunds; n != 1 {
		t.Errorf("refunds %d, want 1", n)
	}
	client.CloseIdleConnections()
}
