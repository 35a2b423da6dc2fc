package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/server"
)

// runsFixture is a store with the runs agent/p1, other/p1, agent/p2 (as
// the server stores the runs of keys: call --owner stores them so) and
// solo (no key), one call each.
func runsFixture(t *testing.T) string {
	t.Helper()
	cfg, _ := cliSetup(t)
	for _, r := range []struct{ key, id string }{{"agent", "p1"}, {"other", "p1"}, {"agent", "p2"}, {"", "solo"}} {
		args := []string{"call", "--config", cfg, "--principal", `{"id":"cust_42"}`, "--tool", "get_order",
			"--args", `{"order_id":"ORD-4471"}`, "--run-id", r.id}
		if r.key != "" {
			args = append(args, "--owner", r.key)
		}
		if code, out, errOut := runCLI(t, args...); code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	return cfg
}

// runs show, replay and whatif --run find a run by the id its key gave it:
// by --key, or the one key that has it; none or several say so.
func TestRunsFoundByTheirKeysID(t *testing.T) {
	cfg := runsFixture(t)
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"show: one key has it", []string{"runs", "show", "p2"}, 0, []string{"Run p2 for cust_42"}},
		{"show: the stored id", []string{"runs", "show", "agent/p2"}, 0, []string{"Run p2 for cust_42"}},
		{"show: --key", []string{"runs", "show", "p1", "--key", "other"}, 0, []string{"Run p1 for cust_42"}},
		{"show: a run without a key", []string{"runs", "show", "solo"}, 0, []string{"Run solo for cust_42"}},
		{"show: two keys have it", []string{"runs", "show", "p1"}, 1, []string{`2 keys have a run "p1" (agent, other): say which with --key agent`}},
		{"show: none, near ones", []string{"runs", "show", "p3"}, 1, []string{`no run "p3" in the store; near ones:`, "agent/p2", "agent/p1"}},
		{"show: not that key's", []string{"runs", "show", "p2", "--key", "other"}, 1, []string{`no run "p2" of the key "other"`, "agent/p2"}},
		{"replay: one key has it", []string{"replay", "p2"}, 0, []string{"Run p2: state rebuilt from 1 execution row:", "It matches"}},
		{"replay: two keys have it", []string{"replay", "p1"}, 1, []string{"say which with --key"}},
		{"whatif: one key has it", []string{"whatif", "--run", "p2"}, 0, []string{"1 recorded call judged under"}},
		{"whatif: --key", []string{"whatif", "--run", "p1", "--key", "agent"}, 0, []string{"1 recorded call judged under"}},
		{"whatif: none", []string{"whatif", "--run", "nope"}, 1, []string{`no run "nope"`}},
		{"call: one key has it", []string{"call", "--run", "p2", "--tool", "get_order", "--args", `{"order_id":"ORD-4471"}`}, 0, []string{`"run_id": "agent/p2"`, `"step": 2`}},
		{"call: --key", []string{"call", "--run", "p1", "--key", "other", "--tool", "get_order", "--args", `{"order_id":"ORD-4471"}`}, 0, []string{`"run_id": "other/p1"`}},
		{"call: two keys have it", []string{"call", "--run", "p1", "--tool", "get_order"}, 1, []string{"say which with --key"}},
		{"call: --key without --run", []string{"call", "--key", "agent", "--principal", `{"id":"x"}`, "--tool", "get_order"}, 2, []string{"--key goes with --run"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append(c.args, "--config", cfg)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

// runs list prints every key's runs, newest first, with the filters of
// GET /v1/runs.
func TestRunsList(t *testing.T) {
	cfg := runsFixture(t)
	code, out, errOut := runCLI(t, "runs", "list", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "RUN ") || !strings.HasPrefix(lines[1], "solo ") ||
		!strings.Contains(lines[2], "agent") || !strings.Contains(lines[1], "get_order ok") {
		t.Fatalf("runs list:\n%s", out)
	}
	code, out, errOut = runCLI(t, "runs", "list", "--config", cfg, "--limit", "2")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 5 ||
		lines[4] != "Showing the newest 2 runs; --limit or --since for others." {
		t.Fatalf("runs list --limit 2 (of 4) says it shows only the newest: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "runs", "--config", cfg, "list", "--key", "agent", "--json", "--limit", "1")
	var list server.RunList
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Runs) != 1 || list.Runs[0].RunID != "p2" || list.Runs[0].Key != "agent" {
		t.Fatalf("runs list --key agent --json --limit 1: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "runs", "list", "--config", cfg, "--since", "yesterday")
	if code != 2 || !strings.Contains(errOut, "since") {
		t.Errorf("bad --since: exit %d\n%s", code, errOut)
	}
}
