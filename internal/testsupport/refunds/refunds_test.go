package refunds

import (
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

func parse(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return v
}

// lookup returns the value at a dotted path of v, or nil.
func lookup(v any, path string) any {
	for _, key := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	return v
}

func TestConfigIsTheFileWithTheBaseURL(t *testing.T) {
	want := parse(t, File)
	want["dependencies"].(map[string]any)["payments"].(map[string]any)["base_url"] = "http://127.0.0.1:1234/x"
	got := parse(t, Config("http://127.0.0.1:1234/x"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Config without options differs from the file:\n%s", Config("http://127.0.0.1:1234/x"))
	}
	for _, tool := range []string{"get_order", "list_refunds", "issue_refund"} {
		if lookup(got, "tools."+tool+".dependency") != "payments" {
			t.Errorf("tool %s is not on payments", tool)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		path string
		want any
	}{
		{"set replaces a scalar", []Option{Set("store", "sqlite:toolgate.db")}, "store", "sqlite:toolgate.db"},
		{"set replaces a map", []Option{Set("tools.issue_refund.retry", "{max_attempts: 1}")}, "tools.issue_refund.retry.max_attempts", uint64(1)},
		{"set adds a tool", []Option{Set("tools.refund_lost", "description: lost\ndependency: flaky\n")}, "tools.refund_lost.dependency", "flaky"},
		{"set adds the maps on the way", []Option{Set("auth.keys", "[{name: a, key: b}]")}, "auth.keys", []any{map[string]any{"name": "a", "key": "b"}}},
		{"delete removes", []Option{Delete("tools.issue_refund.owner", "tools.issue_refund.rules")}, "tools.issue_refund.owner", nil},
		{"delete keeps the rest", []Option{Delete("tools.issue_refund.owner")}, "tools.issue_refund.verify.lookup", "list_refunds"},
		{"add sets each key", []Option{Add("tools", "a: {effect: read}\nb: {effect: write}")}, "tools.b.effect", "write"},
		{"add keeps the others", []Option{Add("tools", "a: {effect: read}")}, "tools.get_order.effect", "read"},
		{"add at the top", []Option{Add("", "store: sqlite:x.db\nlisten: 127.0.0.1:1")}, "listen", "127.0.0.1:1"},
		{"append adds to a list", []Option{Set("auth.keys", "[{name: a}]"), Append("auth.keys", "[{name: b}]")}, "auth.keys", []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}},
		{"append makes a list", []Option{Append("auth.keys", "[{name: b}]")}, "auth.keys", []any{map[string]any{"name": "b"}}},
		{"rename moves the value", []Option{Rename("tools.list_refunds", "refunds_of")}, "tools.refunds_of.effect", "read"},
		{"rename leaves no old key", []Option{Rename("tools.list_refunds", "refunds_of")}, "tools.list_refunds", nil},
		{"later options win", []Option{Set("store", "a"), Set("store", "b")}, "store", "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lookup(parse(t, Config("http://x", tc.opts...)), tc.path)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s = %#v, want %#v", tc.path, got, tc.want)
			}
		})
	}
}

func TestConfigLeavesTheFileAlone(t *testing.T) {
	before := File
	Config("http://x", Delete("tools.issue_refund"), Set("tools.get_order.effect", "write"))
	if File != before || lookup(parse(t, Config("http://x")), "tools.issue_refund.effect") != "write" {
		t.Error("an option changed the fixture for later configs")
	}
}

func TestBadOptionPanics(t *testing.T) {
	for _, opt := range []Option{Delete("tools.no_such_tool"), Set("store.sub", "x"), Set("store", "{"),
		Append("store", "[x]"), Rename("tools.no_such_tool", "x")} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic on an option that does not apply")
				}
			}()
			Config("http://x", opt)
		}()
	}
}
