package config

import (
	"strings"
	"testing"
)

func TestQuotaProblems(t *testing.T) {
	tool := func(effect string, qs ...Quota) *Tool {
		return &Tool{Description: "d", Effect: "write", Dependency: "pay", Request: &Request{Method: "POST", Path: "/x"}, Quotas: qs}
	}
	ok := Quota{Name: "refunds", Limit: 5, Window: Duration(3600e9)}
	cases := []struct {
		name  string
		tools map[string]*Tool
		want  []string // substrings of the error; none: valid
	}{
		{"valid, key defaulted", map[string]*Tool{"a": tool("write", ok)}, nil},
		{"no name", map[string]*Tool{"a": tool("write", Quota{Limit: 5, Window: Duration(1e9)})}, []string{"quotas[0].name"}},
		{"no limit or window", map[string]*Tool{"a": tool("write", Quota{Name: "q"})}, []string{"quotas[0].limit", "quotas[0].window"}},
		{"twice on a tool", map[string]*Tool{"a": tool("write", ok, ok)}, []string{"listed twice"}},
		{"tools disagree", map[string]*Tool{"a": tool("write", ok), "b": tool("write", Quota{Name: "refunds", Limit: 6, Window: Duration(3600e9)})},
			[]string{"must agree"}},
		{"on a read", map[string]*Tool{"a": func() *Tool { t := tool("read", ok); t.Effect = "read"; t.Request.Method = "GET"; return t }()},
			[]string{"effect is read"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := &Config{Dependencies: map[string]*Dependency{"pay": {BaseURL: "http://127.0.0.1:1"}}, Tools: c.tools}
			err := cfg.Normalize()
			if len(c.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if k := cfg.Tools["a"].Quotas[0].Key; k != DefaultQuotaKey {
					t.Errorf("key = %q, want the default %q", k, DefaultQuotaKey)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %v", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
