package tourtest

import (
	"strings"
	"testing"
)

func TestMatchJSON(t *testing.T) {
	got := `{"ok":true,"data":{"refund_id":"RF-99203","amount_paise":425000},"error":null,` +
		`"meta":{"run_id":"tour","attempts":2,"side_effect":"committed","next":"continue"},` +
		`"observation":"issue_refund succeeded on payments (2 attempts, 9012 ms). Result: {...}"}`
	cases := []struct {
		name, want string
		ok         bool
	}{
		{"fields left out", `{"ok": true, "meta": {"attempts": 2}}`, true},
		{"bare ... in objects", `{"ok": true, "data": {"refund_id": "RF-99203", ...}, ..., "meta": {..., "next": "continue"}}`, true},
		{"... in a string", `{"observation": "issue_refund succeeded on payments (2 attempts, ... ms). Result: ..."}`, true},
		{"a wrong attempts count", `{"meta": {"attempts": 3}}`, false},
		{"a wrong string", `{"meta": {"side_effect": "unknown"}}`, false},
		{"a field that is not there", `{"meta": {"verified": true}}`, false},
		{"null is not false", `{"error": false}`, false},
		{"a number as a string", `{"meta": {"attempts": "2"}}`, false},
		{"not an object", `[{"ok": true}]`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := MatchJSON(c.want, got)
			if (err == nil) != c.ok {
				t.Fatalf("MatchJSON(%s) = %v, want ok=%v", c.want, err, c.ok)
			}
		})
	}
}

func TestMatchJSONArrays(t *testing.T) {
	got := `{"order_id":"ORD-4471","refunds":[{"refund_id":"RF-99203"},{"refund_id":"RF-99204"}]}`
	cases := []struct {
		name, want string
		ok         bool
	}{
		{"every element", `{"refunds": [{"refund_id": "RF-99203"}, {"refund_id": "RF-99204"}]}`, true},
		{"one refund is not two", `{"refunds": [{"refund_id": "RF-99203"}]}`, false},
		{"an open array", `{"refunds": [{"refund_id": "RF-99203"}, ...]}`, true},
		{"an open array still checks what it shows", `{"refunds": [{"refund_id": "RF-99999"}, ...]}`, false},
		{"three is not two", `{"refunds": [{}, {}, {}]}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := MatchJSON(c.want, got); (err == nil) != c.ok {
				t.Fatalf("MatchJSON(%s) = %v, want ok=%v", c.want, err, c.ok)
			}
		})
	}
}

func TestMatchJSONSequences(t *testing.T) {
	got := "{\"a\":1}\n{\"a\":2}\n"
	if err := MatchJSON(`{"a": 1} {"a": 2}`, got); err != nil {
		t.Fatal(err)
	}
	if err := MatchJSON(`{"a": 1}`, got); err == nil {
		t.Fatal("one value matched two")
	}
	if err := MatchJSON(`{"a": 1}`, "not json"); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("text matched JSON: %v", err)
	}
}

func TestMatchText(t *testing.T) {
	got := "RUN tour  cust_42  3 steps\n  1  issue_refund   ok   2 attempts\n  2  bank_refund    unknown_outcome\n\n"
	cases := []struct {
		name, want string
		ok         bool
	}{
		{"exact, spaces folded", "RUN tour cust_42 3 steps\n 1 issue_refund ok 2 attempts\n 2 bank_refund unknown_outcome", true},
		{"... across lines", "RUN tour ...\n...bank_refund unknown_outcome", true},
		{"a wrong count", "RUN tour cust_42 4 steps\n...", false},
		{"a missing line", "RUN tour ...\n 3 ...", false},
		{"regexp characters are literal", "RUN tour (.*)...", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := MatchText(c.want, got); (err == nil) != c.ok {
				t.Fatalf("MatchText(%q) = %v, want ok=%v", c.want, err, c.ok)
			}
		})
	}
}

func TestSwapPorts(t *testing.T) {
	swap := map[string]string{"9001": "41001", "8470": "41470"}
	cases := []struct{ in, want string }{
		{"curl -s http://127.0.0.1:8470/healthz", "curl -s http://127.0.0.1:41470/healthz"},
		{"base_url: http://127.0.0.1:9001", "base_url: http://127.0.0.1:41001"},
		{"--listen 127.0.0.1:9001 and localhost:9001", "--listen 127.0.0.1:41001 and localhost:41001"},
		// A port the tour does not name elsewhere keeps its number: a
		// config that says 9003 where the sim listens on 9001 fails.
		{"base_url: http://127.0.0.1:9003", "base_url: http://127.0.0.1:9003"},
		{"version 127.0.0.12:9001", "version 127.0.0.12:9001"},
	}
	for _, c := range cases {
		if got := SwapPorts(c.in, swap); got != c.want {
			t.Errorf("SwapPorts(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Ports("a 127.0.0.1:9001 b localhost:8470 c 127.0.0.1:9001"); strings.Join(got, ",") != "9001,8470" {
		t.Errorf("Ports = %v", got)
	}
}

func TestTourBlocks(t *testing.T) {
	page := "# T\n\n<!-- tour -->\n```sh\necho hi\n```\n\n<!-- tour output -->\n```\nhi\n```\n\n" +
		"<!-- tour excerpt: examples/x.yaml -->\n```yaml\na: 1\n```\n\n```sh\nnot run\n```\n"
	steps, excerpts, err := Tour(Blocks(page))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Run.Text != "echo hi\n" || steps[0].Want == nil || steps[0].Want.Text != "hi\n" {
		t.Fatalf("steps = %+v", steps)
	}
	if len(excerpts) != 1 || excerpts[0].Path != "examples/x.yaml" || excerpts[0].Text != "a: 1\n" {
		t.Fatalf("excerpts = %+v", excerpts)
	}
	for _, bad := range []string{
		"<!-- tour output -->\n```\nhi\n```\n",
		"<!-- tour: typo -->\n```\nhi\n```\n",
	} {
		if _, _, err := Tour(Blocks(bad)); err == nil {
			t.Errorf("Tour(%q) is not an error", bad)
		}
	}
}
