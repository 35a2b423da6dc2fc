package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func load(t *testing.T, dir string, vars map[string]string) (*Config, error) {
	t.Helper()
	path := filepath.Join("testdata", dir, "toolgate.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(raw, path, env(vars))
}

// contractYAML is the refunds fixture as the contract's example writes it:
// a key and a dependency header from the environment, a breaker, timeouts
// and retries, on a SQLite file beside the config.
var contractYAML = refunds.Config("http://127.0.0.1:9001",
	refunds.Add("", `listen: 127.0.0.1:8470
store: sqlite:toolgate.db
auth:
  keys:
    - {name: support-bot, key: "${TOOLGATE_KEY}"}
`),
	refunds.Add("dependencies.payments", `{headers: {Authorization: "Bearer ${PAYMENTS_TOKEN}"}, breaker: {threshold: 5, cooldown: 60s}}`),
	refunds.Set("tools.get_order.timeout", "{connect: 1s, read: 2s}"),
	refunds.Add("tools.issue_refund", "{timeout: {connect: 2s, read: 5s}, retry: {max_attempts: 4, base: 1s, cap: 30s}}"),
	refunds.Delete("tools.issue_refund.verify.result"))

// contractPath is where contractYAML is parsed from: a toolgate.yaml in a
// folder of its own.
func contractPath(t *testing.T) string { return filepath.Join(t.TempDir(), "toolgate.yaml") }

func TestLoadContractExample(t *testing.T) {
	path := contractPath(t)
	cfg, err := Parse([]byte(contractYAML), path, env(map[string]string{"TOOLGATE_KEY": "0123456789abcdef0123", "PAYMENTS_TOKEN": "tok"}))
	if err != nil {
		t.Fatal(err)
	}
	refund := cfg.Tools["issue_refund"]
	tests := []struct {
		name      string
		got, want any
	}{
		{"env expanded in headers", cfg.Dependencies["payments"].Headers["Authorization"], "Bearer tok"},
		{"env expanded in keys", cfg.Auth.Keys[0].Key, "0123456789abcdef0123"},
		{"relative sqlite path anchored at the config", cfg.Store, "sqlite:" + filepath.Join(filepath.Dir(path), "toolgate.db")},
		{"read timeout", refund.Timeout.Read.D(), 5 * time.Second},
		{"connect timeout", refund.Timeout.Connect.D(), 2 * time.Second},
		{"default read timeout", cfg.Tools["list_refunds"].Timeout.Read.D(), DefaultReadTimeout},
		{"default effect is write", cfg.Tools["issue_refund"].Effect, "write"},
		{"name filled in", refund.Name, "issue_refund"},
		{"rule code", refund.Rules[0].Code, "over_limit"},
		{"verify lookup", refund.Verify.Lookup, "list_refunds"},
		{"state expressions", refund.State["refunded_paise"], "state.refunded_paise + args.amount_paise"},
		{"breaker cooldown", cfg.Dependencies["payments"].Breaker.Cooldown.D(), time.Minute},
		{"default retry budget", cfg.Dependencies["payments"].RetryBudget.MinRetries, 3},
		{"observation bytes default", refund.MaxObservationBytes, 4096},
		{"method upper-cased", cfg.Tools["get_order"].Request.Method, "GET"},
	}
	for _, tt := range tests {
		if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if cfg.Version == "" {
		t.Error("config version hash is empty")
	}
	if _, ok := refund.InputSchema["properties"].(map[string]any)["amount_paise"].(map[string]any)["minimum"].(interface{ Int64() (int64, error) }); !ok {
		t.Errorf("schema numbers are not json.Number: %#v", refund.InputSchema["properties"])
	}
}

func TestLoadMissingEnvNamesEveryVariable(t *testing.T) {
	_, err := Parse([]byte(contractYAML), contractPath(t), env(nil))
	if err == nil {
		t.Fatal("want an error for unset variables")
	}
	for _, want := range []string{"TOOLGATE_KEY", "PAYMENTS_TOKEN"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
}

func TestLoadListsEveryProblem(t *testing.T) {
	_, err := load(t, "bad", nil)
	if err == nil {
		t.Fatal("want problems")
	}
	var p *Problem
	if !errors.As(err, &p) {
		t.Fatalf("not a *Problem: %T", err)
	}
	for _, want := range []string{
		"store: \"mysql://nope\" is not a store",
		"auth.keys[0].key: a key must be at least 16",
		"dependencies.payments.base_url",
		"dependencies.payments.retry_budget.ratio: 1.5 must be between 0 and 1",
		"dependencies.payments.retry_budget.min_retries: -1 must be at least 1",
		"tools.refund.description",
		"tools.refund.effect: \"sometimes\"",
		"tools.refund.dependency: no dependency named \"billing\"",
		"tools.refund.request.method: \"FETCH\"",
		"tools.refund.request.path: \"refunds\" must start with /",
		"tools.refund.retry.max_attempts: 50",
		"tools.refund.verify.lookup: no tool named \"nothing\"",
		"tools.refund.verify.found",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing problem %q in:\n%v", want, err)
		}
	}
}

func TestLoadRejectsUnknownKeys(t *testing.T) {
	_, err := Parse([]byte("tools:\n  t:\n    descripton: typo\n"), "x.yaml", env(nil))
	if err == nil || !strings.Contains(err.Error(), "descripton") {
		t.Fatalf("want an error naming the unknown key, got %v", err)
	}
}

func TestTelemetry(t *testing.T) {
	const tools = "tools:\n  t: {description: A tool., dependency: d, request: {path: /t}}\ndependencies:\n  d: {base_url: http://127.0.0.1:1}\n"
	tests := []struct {
		name    string
		yaml    string
		want    Telemetry
		problem string
	}{
		{"defaults", "", Telemetry{Traces: "none", OTLPEndpoint: "http://127.0.0.1:4318", ServiceName: "toolgate"}, ""},
		{"stdout", "telemetry: {traces: stdout, service_name: gw-eu}\n",
			Telemetry{Traces: "stdout", OTLPEndpoint: "http://127.0.0.1:4318", ServiceName: "gw-eu"}, ""},
		{"otlp", "telemetry: {traces: otlp, otlp_endpoint: \"https://otel.internal:4318\"}\n",
			Telemetry{Traces: "otlp", OTLPEndpoint: "https://otel.internal:4318", ServiceName: "toolgate"}, ""},
		{"unknown exporter", "telemetry: {traces: jaeger}\n", Telemetry{}, "telemetry.traces: \"jaeger\" is not an exporter"},
		{"endpoint without a scheme", "telemetry: {traces: otlp, otlp_endpoint: \"collector:4318\"}\n", Telemetry{}, "telemetry.otlp_endpoint: \"collector:4318\" must be an http:// or https:// URL"},
	}
	for _, tt := range tests {
		cfg, err := Parse([]byte(tools+tt.yaml), "x.yaml", env(nil))
		if tt.problem != "" {
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("%s: want problem %q, got %v", tt.name, tt.problem, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if cfg.Telemetry != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, cfg.Telemetry, tt.want)
		}
	}
}

// TestKeyNameWithSlashRefused: a key named agent/x could share the scope
// "agent/..." of a key named agent; such a name is refused at load.
func TestKeyNameWithSlashRefused(t *testing.T) {
	for name, wantErr := range map[string]bool{"agent/x": true, "agent": false, "agent-x_2": false} {
		raw := "store: memory\nauth:\n  keys:\n    - {name: \"" + name + "\", key: \"0123456789abcdef0123\"}\n" +
			"tools:\n  f:\n    description: d\n    dependency: d\n    request: {path: /f}\ndependencies:\n  d: {base_url: \"http://127.0.0.1:1\"}\n"
		_, err := Parse([]byte(raw), "t.yaml", env(nil))
		got := err != nil && strings.Contains(err.Error(), "t.yaml:4:") && strings.Contains(err.Error(), "contains /")
		if got != wantErr {
			t.Errorf("key name %q: error %v, want refused %v", name, err, wantErr)
		}
	}
}
