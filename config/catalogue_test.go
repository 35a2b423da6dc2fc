package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

// cataloguesYAML is the refunds fixture with keys that each have their own
// catalogue (docs/catalogues.md), and a tool no key's principal may call.
var cataloguesYAML = refunds.Config("http://127.0.0.1:9001",
	refunds.Set("auth.keys", `
- {name: support-bot, key: support-key-0123456789, tools: ["get_order", "list_refunds", "issue_refund"], principal: {id: cust_42, permissions: ["refunds:write"]}}
- {name: reader, key: reader-key-0123456789, tools: ["get_*", "list_*"]}
- {name: pinned-reader, key: pinned-key-0123456789, principal: {id: cust_7}}
- {name: ops, key: ops-key-0123456789ab}
`),
	refunds.Add("tools", `close_account:
  description: Close a customer's account.
  dependency: payments
  request: {method: POST, path: /close}
  permission: accounts:admin
`))

// loadCatalogues parses cataloguesYAML as toolgate.yaml.
func loadCatalogues(t *testing.T) (*Config, error) {
	t.Helper()
	return Parse([]byte(cataloguesYAML), "toolgate.yaml", env(nil))
}

func TestCatalogues(t *testing.T) {
	cfg, err := loadCatalogues(t)
	if err != nil {
		t.Fatal(err)
	}
	cats, problems := cfg.Catalogues()
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	all := []string{"close_account", "get_order", "issue_refund", "list_refunds"}
	tests := []struct {
		key              string
		callable, listed []string
	}{
		{"support-bot", []string{"get_order", "issue_refund", "list_refunds"}, []string{"get_order", "issue_refund", "list_refunds"}},
		{"reader", []string{"get_order", "list_refunds"}, []string{"get_order", "list_refunds"}},
		// A pinned principal without a tool's permission is not shown it,
		// but may still call it (and be told forbidden).
		{"pinned-reader", all, []string{"get_order", "list_refunds"}},
		{"ops", all, all},
		{"", all, all},
		{"removed-by-a-reload", []string{}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			c := cats.For(tt.key)
			if !slices.Equal(c.Callable, tt.callable) {
				t.Errorf("callable %v, want %v", c.Callable, tt.callable)
			}
			if !slices.Equal(c.Listed, tt.listed) {
				t.Errorf("listed %v, want %v", c.Listed, tt.listed)
			}
			for _, name := range all {
				if c.Has(name) != slices.Contains(tt.callable, name) {
					t.Errorf("Has(%s) = %v", name, c.Has(name))
				}
				if c.Lists(name) != slices.Contains(tt.listed, name) {
					t.Errorf("Lists(%s) = %v", name, c.Lists(name))
				}
			}
		})
	}
}

func TestCataloguesWithoutKeysShowEverything(t *testing.T) {
	cfg, err := loadCatalogues(t)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auth.Keys = nil
	cats, _ := cfg.Catalogues()
	if got := cats.For("some-old-owner").Callable; len(got) != 4 {
		t.Errorf("development mode: a run's owner sees %v, want every tool", got)
	}
}

func TestCatalogueProblems(t *testing.T) {
	tests := []struct {
		name  string
		tools []string
		want  []string // substrings, one problem each
	}{
		{"a name that is no tool", []string{"get_order", "get_ordr"},
			[]string{`auth.keys[0].tools[1]: "get_ordr" (key bot) matches no tool; the tools are: close_account, get_order, issue_refund, list_refunds`}},
		{"a glob that matches nothing", []string{"crm_*"}, []string{`auth.keys[0].tools[0]: "crm_*" (key bot) matches no tool`}},
		{"a malformed glob", []string{"get_[order"}, []string{`auth.keys[0].tools[0]: "get_[order" (key bot) is not a valid glob`}},
		{"an empty entry", []string{" "}, []string{`auth.keys[0].tools[0]: " " (key bot) is empty`}},
		{"an empty list", []string{}, []string{`auth.keys[0].tools: is empty, so key bot would see no tool at all`}},
		{"every entry matches", []string{"*_order", "list_?efunds", "[ic]*"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadCatalogues(t)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Auth.Keys = []Key{{Name: "bot", Key: "bot-key-0123456789ab", Tools: tt.tools}}
			_, problems := cfg.Catalogues()
			if len(problems) != len(tt.want) {
				t.Fatalf("problems %v, want %d", problems, len(tt.want))
			}
			for i, p := range problems {
				if !strings.Contains(p.Error(), tt.want[i]) {
					t.Errorf("problem %q, want it to contain %q", p.Error(), tt.want[i])
				}
				if !strings.HasPrefix(p.Error(), "toolgate.yaml: ") {
					t.Errorf("problem %q does not name the file", p.Error())
				}
			}
		})
	}
}

func TestMatchTool(t *testing.T) {
	tests := []struct {
		pattern, tool string
		want          bool
	}{
		{"get_order", "get_order", true},
		{"get_order", "get_orders", false},
		{"get_*", "get_order", true},
		{"*", "anything", true},
		{"list_?efunds", "list_refunds", true},
		{"[gl]*", "list_refunds", true},
		{"[gl]*", "issue_refund", false},
		{"get_[order", "get_[order", false}, // malformed: matches nothing
	}
	for _, tt := range tests {
		if got := MatchTool(tt.pattern, tt.tool); got != tt.want {
			t.Errorf("MatchTool(%q, %q) = %v, want %v", tt.pattern, tt.tool, got, tt.want)
		}
	}
}

// BenchmarkCatalogues resolves the keys' lists of a 2,000-tool config once,
// as Compile does at load: a key with two globs, one with 20 names, one
// with none.
func BenchmarkCatalogues(b *testing.B) {
	cfg := &Config{Tools: map[string]*Tool{}}
	var names []string
	for i := range 2000 {
		name := fmt.Sprintf("tool_%04d", i)
		cfg.Tools[name] = &Tool{Name: name}
		if i < 20 {
			names = append(names, name)
		}
	}
	cfg.Auth.Keys = []Key{
		{Name: "globs", Tools: []string{"tool_000?", "tool_001?"}},
		{Name: "names", Tools: names},
		{Name: "all"},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ps := cfg.Catalogues(); len(ps) > 0 {
			b.Fatal(ps)
		}
	}
}
